// npm run bench:abuse: the attacks of issue 16 at full size, one at a time,
// each against a fresh server started as `npm start` starts it (dist/server.js
// with --initial-old-space-size=128 and the heap limit the launcher computes
// from the budget), each bounded in time. For each it prints: whether the
// process is alive, its peak RSS against the budget, the p99 of a small
// session's search during the attack, the status codes the attack saw, and
// acknowledged writes lost.
//
// ABUSE_BUDGET_BYTES sets the budget (default 2 GiB: the machine is shared);
// ABUSE_SECONDS bounds each attack (default 30); ABUSE_ONLY=name,name runs some.
// Loopback only. The socket attacks are bounded by this process's open-file
// limit (ulimit -n); past it they open fewer sockets and say so.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, Pool } from 'undici';
import { ensureBuiltServer, launcherNodeFlags } from './lib/child-server.js';
import { Codes } from './lib/measure.js';
import { writeResults } from './lib/results.js';
import { NO_RATE_LIMITS, spawnServer } from './lib/spawn-server.js';

const MiB = 1024 * 1024;
const BUDGET = Number(process.env.ABUSE_BUDGET_BYTES ?? 2 * 1024 * MiB);
const SECONDS = Number(process.env.ABUSE_SECONDS ?? 30);
const ONLY = process.env.ABUSE_ONLY?.split(',');

/** Sockets this process can open, leaving room for its own files and the prober. */
const FILE_LIMIT = Number(execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim()) || 1024;
const maxSockets = (wanted: number) => Math.min(wanted, FILE_LIMIT - 300);

interface Server {
  child: ChildProcess;
  origin: string;
  port: number;
  pool: Pool;
  exited: Promise<number | string>;
  alive(): boolean;
  peakRss(): number;
}

async function startServer(env: Record<string, string> = {}): Promise<Server> {
  ensureBuiltServer();
  const fullEnv = { ...NO_RATE_LIMITS, MEMORY_BUDGET_BYTES: String(BUDGET), ...env };
  const server = spawnServer({ entry: 'dist', env: fullEnv, nodeFlags: launcherNodeFlags(fullEnv) });
  const { child, exited } = server;
  const origin = await server.listening(600_000);
  const port = Number(new URL(origin).port);
  const status = (field: string) => {
    try {
      return (
        Number(
          /(\d+) kB/.exec(
            readFileSync(`/proc/${child.pid}/status`, 'utf8')
              .split('\n')
              .find((l) => l.startsWith(field)) ?? '',
          )?.[1] ?? 0,
        ) * 1024
      );
    } catch {
      return 0;
    }
  };
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, status('VmHWM:'));
  }, 100);
  exited.then(() => clearInterval(sampler));
  return {
    child,
    origin,
    port,
    exited,
    pool: new Pool(origin, { connections: 8 }),
    alive: server.alive,
    peakRss: () => Math.max(peak, status('VmHWM:')),
  };
}

async function call(pool: Pool, method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await pool.request({
    method: method as 'GET',
    path,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    headersTimeout: 30_000,
    bodyTimeout: 120_000,
  });
  const text = await res.body.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.statusCode, json };
}

/** A small session searched in a loop on a connection of its own; its latencies, failures counted as 10 s. */
async function prober(server: Server) {
  const pool = new Pool(server.origin, { connections: 1 });
  const token = (await call(pool, 'POST', '/token')).json.token;
  const vectors = Array.from({ length: 100 }, (_, i) => ({ id: `p${i}`, vector: Array.from({ length: 16 }, (_, j) => Math.sin(i + j)) }));
  await call(pool, 'POST', '/vectors/add-many', token, { vectors });
  const latencies: number[] = [];
  /** The neighbour's failures: status and error code. */
  const failures = new Codes();
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      try {
        const res = await Promise.race([
          call(pool, 'POST', '/search', token, { queryVector: vectors[latencies.length % 100].vector, topK: 5 }),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 10_000)),
        ]);
        latencies.push(res.status === 200 ? performance.now() - t0 : 10_000);
        if (res.status !== 200) failures.add(`${res.status} ${res.json?.error?.code ?? ''} ${String(res.json?.error?.message ?? '').slice(0, 60)}`.trim());
      } catch (err) {
        latencies.push(10_000);
        failures.add((err as Error).message);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await pool.close().catch(() => {});
      const sorted = [...latencies].sort((a, b) => a - b);
      if (failures.seen.size > 0) console.error(`   the neighbour's failures: ${failures}`);
      return { p99: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? NaN, count: sorted.length };
    },
  };
}

interface Row {
  attack: string;
  alive: string;
  peakRss: string;
  p99: string;
  codes: string;
  lost: string;
  note?: string;
}
const rows: Row[] = [];
const deadline = (seconds = SECONDS) => performance.now() + seconds * 1000;

/** Run one attack against a fresh server, with the prober beside it. */
type Outcome = { lost?: number; note?: string; alive?: string };
type Probe = () => Promise<{ p99: number; count: number }>;

async function attack(name: string, env: Record<string, string>, body: (server: Server, codes: Codes, endProbe: Probe) => Promise<Outcome>) {
  if (ONLY && !ONLY.includes(name)) return;
  console.error(`-- ${name}`);
  const server = await startServer(env);
  const codes = new Codes();
  const probe = await prober(server);
  // An attack that stops the server itself (SIGKILL, SIGTERM) ends the probe first.
  let probed: Promise<{ p99: number; count: number }> | undefined;
  const endProbe: Probe = () => (probed ??= probe.stop());
  let result: Outcome = {};
  try {
    result = await body(server, codes, endProbe);
  } catch (err) {
    result.note = `attack stopped: ${(err as Error).message}`;
  }
  const { p99, count } = await endProbe();
  let alive = server.alive();
  if (alive)
    alive = await call(server.pool, 'GET', '/healthz').then(
      (r) => r.status === 200,
      () => false,
    );
  rows.push({
    attack: name,
    alive: result.alive ?? (alive ? 'yes' : 'NO'),
    peakRss: `${(server.peakRss() / MiB).toFixed(0)} MiB = ${(server.peakRss() / BUDGET).toFixed(2)}x`,
    p99: `${p99.toFixed(1)} ms (${count})`,
    codes: codes.toString(),
    lost: result.lost === undefined ? '-' : String(result.lost),
    note: result.note,
  });
  await server.pool.close().catch(() => {});
  server.child.kill('SIGKILL');
  await server.exited;
}

const uniqueMetadata = (tag: string) => Object.fromEntries(Array.from({ length: 256 }, (_, k) => [`k${k}`, `${tag}_${k}`]));

// 1. Vectors with 256 unique metadata values each, from 8 sessions, until refused for a while or the time is up.
await attack('metadata heap', {}, async (server, codes) => {
  const end = deadline();
  const acked = new Map<string, number>();
  await Promise.all(
    Array.from({ length: 8 }, async (_, w) => {
      const pool = new Pool(server.origin, { connections: 1 });
      const token = (await call(pool, 'POST', '/token')).json.token;
      let stored = 0;
      let refusedInARow = 0;
      for (let b = 0; performance.now() < end && refusedInARow < 20; b++) {
        const vectors = Array.from({ length: 20 }, (_, i) => ({ id: `w${w}b${b}i${i}`, vector: [1, 2, 3, 4], metadata: uniqueMetadata(`${w}.${b}.${i}`) }));
        const res = await call(pool, 'POST', '/vectors/add-many', token, { vectors }).catch(() => ({ status: 'error' as const, json: null }));
        codes.add(res.status);
        if (res.status === 200) {
          stored += 20;
          refusedInARow = 0;
        } else refusedInARow++;
      }
      acked.set(token, stored);
      await pool.close();
    }),
  );
  let lost = 0;
  for (const [token, stored] of acked) {
    const res = await call(server.pool, 'POST', '/vectors/count', token, {}).catch(() => ({ status: 0, json: null }));
    lost += res.status === 200 ? Math.max(0, stored - res.json.count) : stored;
  }
  const limits = await call(server.pool, 'GET', '/limits').catch(() => null);
  return {
    lost,
    note: limits
      ? `stored ${[...acked.values()].reduce((a, b) => a + b, 0)} vectors; budget used ${(limits.json.usage.memoryUsedBytes / MiB).toFixed(0)} MiB (heap ${(limits.json.usage.heapBytes / MiB).toFixed(0)} MiB, metadata store ${((limits.json.usage.metadataBytes ?? 0) / MiB).toFixed(0)} MiB)`
      : undefined,
  };
});

/** A session of `count` vectors of 32 dims with `metadataBytes` of metadata each. */
async function bigMetadataSession(server: Server, count: number, metadataBytes: number): Promise<string> {
  const token = (await call(server.pool, 'POST', '/token')).json.token;
  for (let i = 0; i < count; i += 200) {
    const vectors = Array.from({ length: Math.min(200, count - i) }, (_, j) => ({
      id: `v${i + j}`,
      vector: Array.from({ length: 32 }, (_, k) => Math.sin((i + j) * 31 + k)),
      metadata: { text: 'x'.repeat(metadataBytes - 20) },
    }));
    const res = await call(server.pool, 'POST', '/vectors/add-many', token, { vectors });
    if (res.status !== 200) throw new Error(`seeding: ${res.status} ${JSON.stringify(res.json).slice(0, 200)}`);
  }
  return token;
}

/** `clients` search-many of 64 queries x topK 100 with metadata at once; readers read slowly, the others not at all. */
async function hugeAnswers(server: Server, codes: Codes, token: string, clients: number) {
  const end = deadline();
  const body = JSON.stringify({
    queryVectors: Array.from({ length: 64 }, (_, q) => Array.from({ length: 32 }, (_, k) => Math.cos(q * 7 + k))),
    topK: 100,
    includeMetadata: true,
  });
  let maxBytes = 0;
  await Promise.all(
    Array.from(
      { length: clients },
      (_, c) =>
        new Promise<void>((resolve) => {
          const req = httpRequest(
            `${server.origin}/search-many`,
            { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
            (res) => {
              codes.add(res.statusCode!);
              let bytes = 0;
              const reader = c % 2 === 0;
              if (!reader) res.pause();
              res.on('data', (chunk: Buffer) => {
                bytes += chunk.length;
                maxBytes = Math.max(maxBytes, bytes);
                // Slow readers: 1 MB a second at most.
                res.pause();
                setTimeout(() => res.resume(), chunk.length / 1000);
              });
              res.on('end', resolve);
              res.on('error', () => resolve());
              setTimeout(
                () => {
                  req.destroy();
                  resolve();
                },
                Math.max(0, end - performance.now()),
              );
            },
          );
          req.on('error', (err) => {
            codes.add(err.message.slice(0, 20));
            resolve();
          });
          req.end(body);
        }),
    ),
  );
  return maxBytes;
}

// 2. The issue's search-many of 64 queries, topK 100, 8 KiB metadata (52.7 MB answers), 60 at once.
await attack('huge answers x60 (8 KiB metadata)', {}, async (server, codes) => {
  const token = await bigMetadataSession(server, 6400, 8192);
  await hugeAnswers(server, codes, token, 60);
  return { note: 'answers past MAX_ANSWER_BYTES (32 MiB) are refused before they are built' };
});

// 2b. The same under the cap: 4 KiB metadata, 26 MB answers, streamed.
await attack('huge answers x60 (4 KiB metadata)', {}, async (server, codes) => {
  const token = await bigMetadataSession(server, 6400, 4096);
  const most = await hugeAnswers(server, codes, token, 60);
  return { note: `answers streamed; the fastest reader got ${(most / MiB).toFixed(1)} MiB in the time` };
});

/** Open `count` sockets (in batches), each sending `head`; returns them. */
async function openSockets(server: Server, count: number, head: (i: number) => string | Buffer, codes: Codes, end: number): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let i = 0; i < count && performance.now() < end; i += 200) {
    await Promise.all(
      Array.from(
        { length: Math.min(200, count - i) },
        (_, k) =>
          new Promise<void>((resolve) => {
            const socket = connect(server.port, '127.0.0.1', () => {
              socket.write(head(i + k));
              resolve();
            });
            socket.on('error', (err) => {
              codes.add((err as NodeJS.ErrnoException).code ?? 'error');
              resolve();
            });
            socket.on('data', (chunk) => {
              const m = /^HTTP\/1\.1 (\d+)/.exec(chunk.toString('latin1'));
              if (m) codes.add(Number(m[1]));
            });
            sockets.push(socket);
          }),
      ),
    );
  }
  return sockets;
}

async function newClientWorks(server: Server): Promise<string> {
  const pool = new Pool(server.origin, { connections: 1 });
  try {
    const t0 = performance.now();
    const res = await Promise.race([call(pool, 'POST', '/token'), new Promise<never>((_, r) => setTimeout(() => r(new Error('no answer in 10 s')), 10_000))]);
    return `a new client's POST /token: ${res.status} in ${(performance.now() - t0).toFixed(0)} ms`;
  } catch (err) {
    return `a new client's POST /token: ${(err as Error).message}`;
  } finally {
    await pool.close().catch(() => {});
  }
}

// 3. 13,200 connections each sending a header, Content-Length 100000, and one byte.
await attack('13,200 slow bodies', {}, async (server, codes) => {
  const end = deadline();
  const token = (await call(server.pool, 'POST', '/token')).json.token;
  const sockets = await openSockets(
    server,
    maxSockets(13_200),
    () => `POST /vectors/add-many HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
    codes,
    end,
  );
  await new Promise((r) => setTimeout(r, Math.max(0, Math.min(10_000, end - performance.now()))));
  const note = `${sockets.length} sockets; ${await newClientWorks(server)}`;
  for (const s of sockets) s.destroy();
  return { note };
});

// 4. 150 bodies of 31 MB, each held one byte short.
await attack('150 x 31 MB bodies held', {}, async (server, codes) => {
  const end = deadline(Math.max(SECONDS, 60));
  const token = (await call(server.pool, 'POST', '/token')).json.token;
  const length = 31 * 1000 * 1000;
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  const sockets = await openSockets(
    server,
    150,
    () => `POST /vectors/add-many HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`,
    codes,
    end,
  );
  // Send each body but its last byte, as fast as the server takes it.
  await Promise.all(
    sockets.map(async (socket) => {
      let sent = 0;
      while (sent < length - 1 && !socket.destroyed && performance.now() < end) {
        const piece = chunk.subarray(0, Math.min(chunk.length, length - 1 - sent));
        sent += piece.length;
        if (!socket.write(piece)) await Promise.race([once(socket, 'drain'), once(socket, 'close'), new Promise((r) => setTimeout(r, 1000))]);
      }
    }),
  );
  await new Promise((r) => setTimeout(r, Math.max(0, Math.min(5000, end - performance.now()))));
  const note = `${sockets.filter((s) => !s.destroyed).length} of ${sockets.length} still open; ${await newClientWorks(server)}`;
  for (const s of sockets) s.destroy();
  return { note };
});

// 5. 20,000 idle sockets, then a new client.
await attack('20,000 idle sockets', {}, async (server, codes) => {
  const end = deadline();
  const sockets = await openSockets(server, maxSockets(20_000), () => '', codes, end);
  await new Promise((r) => setTimeout(r, Math.max(0, Math.min(5000, end - performance.now()))));
  const limited = sockets.length < 20_000 ? ` (ulimit -n ${FILE_LIMIT} allows no more)` : '';
  const note = `${sockets.filter((s) => !s.destroyed).length} of ${sockets.length}${limited} still open; ${await newClientWorks(server)}`;
  for (const s of sockets) s.destroy();
  return { note };
});

// 6. A full disk: DATA_DIR on a 2 MiB tmpfs, adds until full, then reads; SIGKILL and restart; acknowledged vectors counted.
{
  const mnt = mkdtempSync(join(tmpdir(), 'tempvec-abuse-disk-'));
  let mounted = false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt], { stdio: 'ignore' });
    mounted = true;
  } catch {
    if (!ONLY || ONLY.includes('full disk'))
      rows.push({ attack: 'full disk', alive: '-', peakRss: '-', p99: '-', codes: '-', lost: '-', note: 'skipped: cannot mount a tmpfs here (needs root)' });
  }
  if (mounted) {
    const dataDir = join(mnt, 'data');
    mkdirSync(dataDir);
    let acked = 0;
    let token = '';
    await attack('full disk (2 MiB tmpfs)', { DATA_DIR: dataDir }, async (server, codes, endProbe) => {
      const end = deadline();
      token = (await call(server.pool, 'POST', '/token')).json.token;
      for (let b = 0; performance.now() < end && b < 400; b++) {
        const vectors = Array.from({ length: 10 }, (_, i) => ({ id: `d${b}-${i}`, vector: Array.from({ length: 64 }, (_, k) => Math.sin(b * 10 + i + k)) }));
        const res = await call(server.pool, 'POST', '/vectors/add-many', token, { vectors }).catch(() => ({ status: 'error', json: null }));
        codes.add(res.status);
        if (res.status === 200) acked += 10;
        const read = await call(server.pool, 'POST', '/vectors/get', token, { id: 'd0-0' }).catch(() => ({ status: 'error', json: null }));
        codes.add(`read ${read.status}`);
      }
      // SIGKILL, restart on the same data, count what is there.
      await endProbe();
      const alive =
        server.alive() &&
        (await call(server.pool, 'GET', '/healthz').then(
          (r) => r.status === 200,
          () => false,
        ));
      server.child.kill('SIGKILL');
      await server.exited;
      const again = await startServer({ DATA_DIR: dataDir });
      const count = await call(again.pool, 'POST', '/vectors/count', token, {});
      again.child.kill('SIGKILL');
      await again.exited;
      const lost = count.status === 200 ? Math.max(0, acked - count.json.count) : acked;
      return {
        lost,
        alive: alive ? 'yes (then SIGKILLed)' : 'NO',
        note: `${acked} vectors acknowledged; after SIGKILL and restart: ${count.status === 200 ? count.json.count : `HTTP ${count.status}`}`,
      };
    });
    execFileSync('umount', [mnt]);
  }
  rmSync(mnt, { recursive: true, force: true });
}

// 7. SIGTERM while a client reads a 26 MB answer slowly.
await attack('SIGTERM during a large answer', {}, async (server, codes, endProbe) => {
  const token = await bigMetadataSession(server, 6400, 4096);
  const body = JSON.stringify({
    queryVectors: Array.from({ length: 64 }, (_, q) => Array.from({ length: 32 }, (_, k) => Math.cos(q * 7 + k))),
    topK: 100,
    includeMetadata: true,
  });
  let received = 0;
  let total = -1;
  const done = new Promise<void>((resolve) => {
    const req = httpRequest(
      `${server.origin}/search-many`,
      { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        codes.add(res.statusCode!);
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          parts.push(chunk);
          res.pause();
          setTimeout(() => res.resume(), 2);
        });
        res.on('end', () => {
          try {
            total = JSON.parse(Buffer.concat(parts).toString()).results.length;
          } catch {
            total = -2;
          }
          resolve();
        });
        res.on('error', () => resolve());
        res.on('aborted', () => resolve());
      },
    );
    req.on('error', () => resolve());
    req.end(body);
  });
  await new Promise((r) => setTimeout(r, 500));
  await endProbe();
  server.child.kill('SIGTERM');
  const t0 = performance.now();
  await done;
  const code = await server.exited;
  return {
    alive: `exited ${code} as asked`,
    note: `received ${(received / MiB).toFixed(1)} MiB, ${total === 64 ? 'whole answer (64 result lists)' : 'answer cut off'}; exit ${code} ${(performance.now() - t0).toFixed(0)} ms after SIGTERM`,
  };
});

console.log(
  `\nbench:abuse: MEMORY_BUDGET_BYTES=${BUDGET} (${(BUDGET / MiB).toFixed(0)} MiB), each attack bounded to about ${SECONDS} s, loopback, load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`,
);
console.log('| attack | alive | peak RSS vs budget | small session search p99 (n) | status codes seen | acknowledged writes lost | notes |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.attack} | ${r.alive} | ${r.peakRss} | ${r.p99} | ${r.codes} | ${r.lost} | ${r.note ?? ''} |`);
const table = rows.map((r) => ({
  attack: r.attack,
  alive: r.alive,
  'peak RSS vs budget': r.peakRss,
  'small session search p99 (n)': r.p99,
  'status codes seen': r.codes,
  'acknowledged writes lost': r.lost,
  notes: r.note ?? '',
}));
console.log(`results: ${writeResults('abuse', { budgetBytes: BUDGET, seconds: SECONDS, rows: table })}`);
// Clients still open in the attacks are dropped with the process.
new Agent().close().catch(() => {});
process.exit(0);
