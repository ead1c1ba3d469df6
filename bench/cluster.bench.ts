// npm run bench:cluster: search and add-many throughput through nginx (the
// cluster launcher, src/cluster/) with 1, 2 and 3 instances on this machine,
// against one instance directly. 12 sessions of 10k x 384 (cosine: a
// search-heavy load) on each configuration, spread over its instances by
// POST /token; the load cycles through the sessions and 64 queries, IN_FLIGHT
// requests at a time (undici, keep-alive); add-many replaces 100 of a
// session's vectors. Rounds of every target are interleaved. CPU per request
// of the bench's client, nginx and the instances comes from /proc. Also: the
// proxy's cost per request at one request in flight (GET /healthz and a
// 1k x 384 POST /search, nginx with 1 instance minus the instance directly).
// Goals: proxy cost <= 15% of a 1k x 384 search's p50; 2 instances >= 1.7x
// the search throughput of 1 instance.
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { availableParallelism } from 'node:os';
import { Pool } from 'undici';
import { loadConfig } from '../src/config.js';
import { Cluster, DIST_SERVER, findNginx } from '../src/cluster/launcher.js';
import { encodeFloat32Base64 } from '../src/schemas/base64-float32.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { fmt, median, printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';

const DIM = 384;
const ROWS = quick ? 1_000 : 10_000;
const SMALL_ROWS = 1_000;
const SESSIONS = 12;
const IN_FLIGHT = 16;
const ADD_BATCH = 100;
const ROUND_MS = quick ? 400 : 2_000;
const ROUNDS = quick ? 1 : 5;
const LATENCY_REQUESTS = quick ? 100 : 400;

interface Target {
  name: string;
  instances: number;
  origin: string;
  pool: Pool;
  tokens: string[];
  /** GET /healthz through nginx: its internal listener (the public port answers it 404). */
  healthPool?: Pool;
  /** Process ids of the instances behind this target (nginx's are found from its master). */
  instancePids: number[];
  nginxPid?: number;
}

interface Load {
  rps: number;
  p50: number;
  p99: number;
  /** CPU ms per request: the bench's client, nginx, the instances. */
  cpu: { client: number; nginx: number; instances: number };
}

/** CPU ms (user + system) a process has used so far (/proc, 10 ms ticks). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** nginx's master and its workers. */
function nginxPids(master: number): number[] {
  const pids = [master];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
      if (ppid === master) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

function cpuSnapshot(target: Target) {
  const clientMs = (process.cpuUsage().user + process.cpuUsage().system) / 1000;
  const nginx = target.nginxPid ? nginxPids(target.nginxPid).reduce((sum, pid) => sum + cpuMs(pid), 0) : 0;
  return { client: clientMs, nginx, instances: target.instancePids.reduce((sum, pid) => sum + cpuMs(pid), 0) };
}

const nginx = findNginx();
if (!nginx) {
  console.error('nginx is not installed: apt-get install nginx');
  process.exit(1);
}

const data = uniformVectors(Math.max(ROWS, SMALL_ROWS), DIM, 18);
const queries = uniformVectors(64, DIM, 81);
const searchBodies = Array.from({ length: 64 }, (_, q) => Buffer.from(JSON.stringify({ queryVector: encodeFloat32Base64(rowOf(queries, DIM, q)), topK: 10 })));
/** search-many of 8 of the queries: more kernel work per request, less HTTP. */
const searchManyBodies = Array.from({ length: 8 }, (_, b) =>
  Buffer.from(
    JSON.stringify({
      queryVectors: Array.from({ length: 8 }, (_, q) => encodeFloat32Base64(rowOf(queries, DIM, b * 8 + q))),
      topK: 10,
    }),
  ),
);
/** add-many bodies that replace ADD_BATCH of the session's ids: the sessions keep their size. */
const addBodies = Array.from({ length: 64 }, (_, b) =>
  Buffer.from(
    JSON.stringify({
      vectors: Array.from({ length: ADD_BATCH }, (_, i) => ({
        id: `v${(b * ADD_BATCH + i) % ROWS}`,
        vector: encodeFloat32Base64(rowOf(data, DIM, (b * ADD_BATCH + i + 7) % ROWS)),
      })),
    }),
  ),
);
/** add-many bodies of 1000 that fill a session of `rows`. */
const fillBodies = (rows: number) =>
  Array.from({ length: rows / 1000 }, (_, b) =>
    Buffer.from(
      JSON.stringify({
        vectors: Array.from({ length: 1000 }, (_, i) => ({ id: `v${b * 1000 + i}`, vector: encodeFloat32Base64(rowOf(data, DIM, b * 1000 + i)) })),
      }),
    ),
  );

async function call(pool: Pool, method: 'GET' | 'POST', path: string, body?: Buffer | string, token?: string): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await pool.request({ method, path, headers, body });
  const text = await res.body.text();
  return { status: res.statusCode, json: text.startsWith('{') ? JSON.parse(text) : text };
}

async function fill(pool: Pool, sessions = SESSIONS, rows = ROWS): Promise<string[]> {
  const tokens: string[] = [];
  const bodies = fillBodies(rows);
  for (let s = 0; s < sessions; s++) {
    const { json } = await call(pool, 'POST', '/token');
    for (const body of bodies) {
      const res = await call(pool, 'POST', '/vectors/add-many', body, json.token);
      if (res.status !== 200) throw new Error(`add-many: ${res.status} ${JSON.stringify(res.json).slice(0, 200)}`);
    }
    tokens.push(json.token);
  }
  return tokens;
}

/** IN_FLIGHT workers for ROUND_MS, each request to the next session with the next body. */
async function load(target: Target, path: string, bodies: Buffer[], inFlight = IN_FLIGHT): Promise<Load> {
  const latencies: number[] = [];
  const cpu0 = cpuSnapshot(target);
  const end = performance.now() + ROUND_MS;
  let sent = 0;
  const worker = async () => {
    while (performance.now() < end) {
      const n = sent++;
      const t0 = performance.now();
      const res = await target.pool.request({
        method: 'POST',
        path,
        body: bodies[n % bodies.length],
        headers: { 'content-type': 'application/json', authorization: `Bearer ${target.tokens[n % target.tokens.length]}` },
      });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`${target.name} ${path}: ${res.statusCode}`);
      latencies.push(performance.now() - t0);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = cpuSnapshot(target);
  const per = (key: keyof typeof cpu0) => (cpu1[key] - cpu0[key]) / latencies.length;
  latencies.sort((a, b) => a - b);
  return {
    rps: latencies.length / seconds,
    p50: latencies[Math.floor(latencies.length * 0.5)],
    p99: latencies[Math.floor(latencies.length * 0.99)],
    cpu: { client: per('client'), nginx: per('nginx'), instances: per('instances') },
  };
}

/** p50 of `count` requests one after another. */
async function sequentialP50(pool: Pool, method: 'GET' | 'POST', path: string, count: number, body?: (i: number) => Buffer, token?: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const res = await call(pool, method, path, body?.(i), token);
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    times.push(performance.now() - t0);
  }
  return median(times);
}

const config = loadConfig();
const env = { ...process.env, TOKEN_RATE_PER_MIN: '0', MAX_SESSIONS_PER_ADDRESS: '0', REQUEST_RATE_PER_SEC: '0' };
const clusters: Cluster[] = [];
const targets: Target[] = [];
try {
  for (const instances of [1, 2, 3]) {
    const cluster = new Cluster({
      instances,
      port: 0,
      host: '127.0.0.1',
      dataDir: '',
      maxBodyBytes: config.maxBodyBytes,
      maxImportBytes: config.maxImportBytes,
      env,
      nginx,
      server: DIST_SERVER,
      respawnMs: 0,
      workerProcesses: 1,
      // One address stands for many clients here: nginx's per-address limits are off.
      perAddress: { connections: 0, requestsPerSec: 0 },
      log: () => {},
    });
    clusters.push(cluster);
    await cluster.start();
    const instancePids = cluster.instances.map((instance) => instance.child!.pid!);
    if (instances === 1) {
      const pool = new Pool(cluster.instances[0].url, { connections: IN_FLIGHT });
      targets.push({ name: '1 instance, direct', instances: 1, origin: cluster.instances[0].url, pool, tokens: [], instancePids });
    }
    const pool = new Pool(cluster.url, { connections: IN_FLIGHT });
    targets.push({
      name: `nginx + ${instances} instance${instances > 1 ? 's' : ''}`,
      instances,
      origin: cluster.url,
      pool,
      healthPool: new Pool(cluster.internalUrl, { connections: 1 }),
      tokens: [],
      instancePids,
      nginxPid: cluster.nginxPid,
    });
  }
  // Each configuration's own sessions; "direct" and "nginx + 1" share the one instance's.
  for (const target of targets) if (target.name !== '1 instance, direct') target.tokens = await fill(target.pool);
  targets[0].tokens = targets[1].tokens;
  for (const target of targets.slice(2)) {
    const spread = new Set(target.tokens.map((t) => t.split('.')[0]));
    if (spread.size !== target.instances) throw new Error(`${target.name}: sessions on ${spread.size} instances`);
  }

  // Proxy cost at one request in flight: the same instance and a 1k x 384 session, with and without nginx.
  const [direct, proxied] = [targets[0], targets[1]];
  const [token] = await fill(proxied.pool, 1, SMALL_ROWS);
  const latency = { healthz: { direct: [] as number[], proxied: [] as number[] }, search: { direct: [] as number[], proxied: [] as number[] } };
  for (let r = 0; r < ROUNDS; r++) {
    for (const [which, target] of [
      ['direct', direct],
      ['proxied', proxied],
    ] as const) {
      latency.healthz[which].push(await sequentialP50(target.healthPool ?? target.pool, 'GET', '/healthz', LATENCY_REQUESTS));
      latency.search[which].push(await sequentialP50(target.pool, 'POST', '/search', LATENCY_REQUESTS / 4, (i) => searchBodies[i % 64], token));
    }
  }

  const kinds = [
    ['search', '/search', searchBodies],
    ['search-many x8', '/search-many', searchManyBodies],
    ['add-many', '/vectors/add-many', addBodies],
  ] as const;
  const results = new Map<string, Load[]>();
  for (const target of targets) await load(target, '/search', searchBodies); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < targets.length; k++) {
      const target = targets[(k + r) % targets.length];
      for (const [kind, path, bodies] of kinds) {
        const key = `${target.name}|${kind}`;
        results.set(key, [...(results.get(key) ?? []), await load(target, path, bodies as Buffer[])]);
      }
    }
  }

  const of = (name: string, kind: string) => {
    const runs = results.get(`${name}|${kind}`)!;
    return {
      rps: median(runs.map((x) => x.rps)),
      p50: median(runs.map((x) => x.p50)),
      p99: median(runs.map((x) => x.p99)),
      cpu: { client: median(runs.map((x) => x.cpu.client)), nginx: median(runs.map((x) => x.cpu.nginx)), instances: median(runs.map((x) => x.cpu.instances)) },
    };
  };
  const rows = targets.flatMap((target) =>
    kinds.map(([kind]) => {
      const m = of(target.name, kind);
      return {
        target: target.name,
        load: kind,
        'req/s': Math.round(m.rps),
        'p50 ms': m.p50,
        'p99 ms': m.p99,
        'vs direct': fmt(m.rps / of(direct.name, kind).rps),
        'vs nginx + 1': fmt(m.rps / of(proxied.name, kind).rps),
        'CPU ms/req client': fmt(m.cpu.client),
        nginx: fmt(m.cpu.nginx),
        instances: fmt(m.cpu.instances),
      };
    }),
  );
  console.log(
    `\n${SESSIONS} sessions of ${ROWS} x ${DIM} per configuration (${availableParallelism()} cores), ${IN_FLIGHT} requests in flight, add-many of ${ADD_BATCH}, ${ROUNDS} interleaved rounds of ${ROUND_MS} ms (medians)`,
  );
  printTable(rows);

  const p50 = (xs: number[]) => median(xs);
  const healthCost = p50(latency.healthz.proxied) - p50(latency.healthz.direct);
  const searchCost = p50(latency.search.proxied) - p50(latency.search.direct);
  const searchP50 = p50(latency.search.direct);
  console.log('\nproxy cost per request, one request in flight (p50, nginx + 1 instance minus the instance directly)');
  printTable([
    {
      request: 'GET /healthz',
      'direct ms': p50(latency.healthz.direct),
      'through nginx ms': p50(latency.healthz.proxied),
      'cost ms': healthCost,
      'cost / 1k x 384 search p50': fmt(healthCost / searchP50),
    },
    {
      request: 'POST /search 1k x 384',
      'direct ms': searchP50,
      'through nginx ms': p50(latency.search.proxied),
      'cost ms': searchCost,
      'cost / 1k x 384 search p50': fmt(searchCost / searchP50),
    },
  ]);
  const two = of('nginx + 2 instances', 'search').rps;
  const twoMany = of('nginx + 2 instances', 'search-many x8').rps;
  const goals = {
    proxyCostRatio: searchCost / searchP50,
    twoInstancesVsDirect: two / of(direct.name, 'search').rps,
    twoInstancesVsNginxOne: two / of(proxied.name, 'search').rps,
    searchManyTwoInstancesVsDirect: twoMany / of(direct.name, 'search-many x8').rps,
  };
  console.log(
    `\ngoal: proxy cost <= 15% of a 1k x 384 search's p50: ${fmt(goals.proxyCostRatio * 100, 1)}% (${goals.proxyCostRatio <= 0.15 ? 'met' : 'missed'})`,
  );
  console.log(
    `goal: 2 instances >= 1.7x the search throughput of 1: ${fmt(goals.twoInstancesVsDirect)}x one instance directly, ${fmt(goals.twoInstancesVsNginxOne)}x nginx + 1 (${goals.twoInstancesVsDirect >= 1.7 ? 'met' : 'missed'}); search-many x8: ${fmt(goals.searchManyTwoInstancesVsDirect)}x one instance directly`,
  );
  console.log(
    `results: ${writeResults('cluster', { dim: DIM, rows: ROWS, sessions: SESSIONS, inFlight: IN_FLIGHT, table: rows, latency, goals, tables: { rows } })}`,
  );
} finally {
  for (const target of targets) await Promise.all([target.pool.close(), target.healthPool?.close()]);
  for (const cluster of clusters) await cluster.stop();
}
