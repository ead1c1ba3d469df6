// Start bench/lib/server-process.mjs (the compiled server in dist/, as
// `npm start` runs it; bench/lib/spawn-server.ts) and talk to it with undici.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { build } from '../../scripts/build.js';
import { loadConfig } from '../../src/config.js';
import { heapLimitMiB } from '../../src/limits/heap-limit.js';
import { spawnServer } from './spawn-server.js';

export interface ChildServer {
  child: ChildProcess;
  origin: string;
  pool: Pool;
  post(path: string, body: string | Buffer, token?: string): Promise<any>;
  get(path: string, token?: string): Promise<any>;
  /** Peak and current resident set size of the server process, bytes (Linux /proc). */
  rss(): { peak: number; current: number };
  /** CPU time (user + system) the server process has used so far, microseconds (Linux /proc, 10 ms ticks). */
  cpuMicros(): number;
  stop(): Promise<void>;
}

const root = new URL('../../', import.meta.url).pathname;
/** A server with DATA_DIR lists its sessions before it says READY. */
const START_TIMEOUT_MS = 600_000;

/** Compile src/ to dist/ (`npm run build:server`) when it is stale (scripts/build.ts); its line goes to stderr, apart from the figures. */
export function ensureBuiltServer(): void {
  build(['server'], { log: (line) => console.error(line) });
}

/**
 * The Node flags `npm start` gives the server (package.json's start script,
 * `node <flags> dist/server.js`), so a child server runs as the service does.
 */
export function startScriptNodeFlags(startScript = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start as string): string[] {
  const m = /(?:^|&& )node((?: --[\w-]+(?:=\S+)?)*) dist\/(?:server|start)\.js$/.exec(startScript);
  if (!m) throw new Error(`package.json's start script does not end in "node [flags] dist/server.js" or dist/start.js: ${startScript}`);
  return m[1].split(' ').filter(Boolean);
}

/** npm start's Node flags and the heap limit its launcher (src/start.ts) sets from the budget in `env`. */
export function launcherNodeFlags(env: Record<string, string>): string[] {
  const heap = heapLimitMiB(loadConfig({ ...process.env, ...env }));
  return [...startScriptNodeFlags(), ...(heap ? [`--max-old-space-size=${heap}`] : [])];
}

/**
 * `nodeFlags`: the start script's unless given (bench/experiments/gc-flags.ts
 * compares others); CHILD_NODE_FLAGS adds more to any bench run. `script`:
 * another checkout's bench/lib/server-process.mjs (its own built dist/), for
 * a before/after comparison in one run.
 */
export async function startChildServer(env: Record<string, string> = {}, nodeFlags = startScriptNodeFlags(), script?: string): Promise<ChildServer> {
  if (script === undefined) ensureBuiltServer();
  const flags = [...nodeFlags, ...(process.env.CHILD_NODE_FLAGS ?? '').split(' ').filter(Boolean)];
  const server = spawnServer({ entry: script === undefined ? 'bench' : { script: resolve(script) }, env, nodeFlags: flags, stderr: 'inherit' });
  const { child } = server;
  const origin = await server.listening(START_TIMEOUT_MS);
  const pool = new Pool(origin, { connections: 32, pipelining: 1 });
  const request = async (method: 'GET' | 'POST', path: string, body?: string | Buffer, token?: string) => {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await pool.request({ method, path, headers, body });
    const json = (await res.body.json()) as any;
    if (res.statusCode >= 400) throw new Error(`${path}: ${res.statusCode} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  const status = (field: string) =>
    Number(
      /(\d+) kB/.exec(
        readFileSync(`/proc/${child.pid}/status`, 'utf8')
          .split('\n')
          .find((l) => l.startsWith(field)) ?? '',
      )?.[1] ?? 0,
    ) * 1024;
  return {
    child,
    origin,
    pool,
    post: (path, body, token) => request('POST', path, body, token),
    get: (path, token) => request('GET', path, undefined, token),
    rss: () => ({ peak: status('VmHWM:'), current: status('VmRSS:') }),
    cpuMicros: () => {
      // Fields after the command name: utime and stime are the 12th and 13th, in clock ticks (100 per second).
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10_000;
    },
    stop: async () => {
      await pool.close();
      child.kill();
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/** Milliseconds of CPU (user + system) the child server has used so far (process.cpuUsage() in the server, finer than /proc's ticks). */
export async function serverCpuMs(child: ChildServer): Promise<number> {
  const { user, system } = await child.get('/bench/cpu');
  return (user + system) / 1000;
}

/**
 * `count` POSTs of `body` to `path` (with `token`, if any), `inFlight` at a
 * time; wall ms per request and server CPU ms per request. Any answer but
 * 200 throws.
 */
export async function postLoad(child: ChildServer, path: string, body: Buffer, token: string | undefined, count: number, inFlight: number) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  let left = count;
  const worker = async () => {
    while (left-- > 0) {
      const res = await child.pool.request({ method: 'POST', path, headers, body });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode}`);
    }
  };
  const cpu0 = await serverCpuMs(child);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const wall = (performance.now() - t0) / count;
  return { wall, cpu: ((await serverCpuMs(child)) - cpu0) / count };
}
