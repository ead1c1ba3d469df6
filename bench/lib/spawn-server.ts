// The one way the benches and the tests start a server as a child process:
// which entry it runs, its environment and Node flags, its output kept, its
// exit as a promise, and the origin it says it listens on.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The Node arguments of each way to run the service, from the project's root. */
const ENTRIES = {
  /** src/server.ts through tsx: the tests, with no build first. */
  source: ['--import', 'tsx', 'src/server.ts'],
  /** npm start's launcher (src/start.ts) through tsx: it sets the heap limit and starts the server. */
  launcher: ['--import', 'tsx', 'src/start.ts'],
  /** The compiled server, as `npm start` runs it. */
  dist: ['dist/server.js'],
  /** The compiled server with the benches' extra routes (bench/lib/server-process.mjs). */
  bench: ['bench/lib/server-process.mjs'],
} as const;

/** Rate limits off: every request of a bench or test comes from 127.0.0.1 and one token. */
export const NO_RATE_LIMITS = { TOKEN_RATE_PER_MIN: '0', MAX_SESSIONS_PER_ADDRESS: '0', REQUEST_RATE_PER_SEC: '0' } as const;

export interface SpawnOptions {
  /** One of ENTRIES, or the path of another script (another checkout's bench/lib/server-process.mjs). */
  entry: keyof typeof ENTRIES | { script: string };
  /** Added to this process's environment, after PORT=0 and HOST=127.0.0.1. */
  env?: Record<string, string>;
  nodeFlags?: readonly string[];
  /** 'inherit': the child's stderr goes to ours (benches); 'keep': into output() with its stdout (tests). */
  stderr?: 'inherit' | 'keep';
}

export interface ServerChild {
  child: ChildProcess;
  /** Everything the child wrote so far (stdout, and stderr when kept). */
  output(): string;
  /** The exit code, or the signal's name. */
  exited: Promise<number | string>;
  alive(): boolean;
  /** The origin (http://127.0.0.1:port) once the server says it listens; rejects if it exits first or takes `timeoutMs`. */
  listening(timeoutMs?: number): Promise<string>;
}

/** The line a server prints once it listens: src/server.ts's, or server-process.mjs's READY. */
const LISTENING = /listening on (http:\/\/[\d.]+:\d+)|READY (\d+)/;

export function spawnServer({ entry, env = {}, nodeFlags = [], stderr = 'keep' }: SpawnOptions): ServerChild {
  const args = typeof entry === 'string' ? ENTRIES[entry] : [entry.script];
  const child = spawn(process.execPath, [...nodeFlags, ...args], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', stderr === 'keep' ? 'pipe' : 'inherit'],
  });
  let log = '';
  child.stdout!.on('data', (chunk) => (log += chunk));
  child.stderr?.on('data', (chunk) => (log += chunk));
  let done = false;
  const exited = once(child, 'exit').then(([code, signal]) => {
    done = true;
    return (code ?? signal) as number | string;
  });
  const listening = (timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const found = () => {
        const m = LISTENING.exec(log);
        return m && (m[1] ?? `http://127.0.0.1:${m[2]}`);
      };
      const timer = setTimeout(() => finish(new Error(`server did not start within ${timeoutMs} ms: ${log}`)), timeoutMs);
      const onData = () => {
        const origin = found();
        if (origin) finish(undefined, origin);
      };
      function finish(error?: Error, origin?: string) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        if (error) reject(error);
        else resolve(origin!);
      }
      child.stdout!.on('data', onData);
      exited.then(() => finish(new Error(`server exited: ${log}`)));
      onData();
    });
  return { child, output: () => log, exited, alive: () => !done, listening };
}

export interface ServerProcess extends ServerChild {
  url: string;
}

/** src/server.ts with rate limits off, once it listens (the tests of signals, crashes and restarts). */
export async function startSourceServer(env: Record<string, string> = {}): Promise<ServerProcess> {
  const server = spawnServer({ entry: 'source', env: { ...NO_RATE_LIMITS, ...env } });
  return { ...server, url: await server.listening(15_000) };
}
