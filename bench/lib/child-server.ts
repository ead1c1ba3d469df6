// Start bench/lib/server-process.ts and talk to it with undici.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

export interface ChildServer {
  child: ChildProcess;
  origin: string;
  pool: Pool;
  post(path: string, body: string | Buffer, token?: string): Promise<any>;
  get(path: string, token?: string): Promise<any>;
  /** Peak and current resident set size of the server process, bytes (Linux /proc). */
  rss(): { peak: number; current: number };
  stop(): Promise<void>;
}

export async function startChildServer(env: Record<string, string> = {}): Promise<ChildServer> {
  const script = new URL('./server-process.ts', import.meta.url).pathname;
  const child = spawn(process.execPath, ['--import', 'tsx', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /READY (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  const origin = `http://127.0.0.1:${port}`;
  const pool = new Pool(origin, { connections: 32, pipelining: 1 });
  const request = async (method: 'GET' | 'POST', path: string, body?: string | Buffer, token?: string) => {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await pool.request({ method, path, headers, body });
    const json = await res.body.json() as any;
    if (res.statusCode >= 400) throw new Error(`${path}: ${res.statusCode} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  const status = (field: string) => Number(/(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(field)) ?? '')?.[1] ?? 0) * 1024;
  return {
    child, origin, pool,
    post: (path, body, token) => request('POST', path, body, token),
    get: (path, token) => request('GET', path, undefined, token),
    rss: () => ({ peak: status('VmHWM:'), current: status('VmRSS:') }),
    stop: async () => {
      await pool.close();
      child.kill();
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
