// The real server (src/server.ts) as a child process on a free loopback
// port, for tests of signals, crashes and restarts.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
}

export async function startServer(env: Record<string, string> = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', TOKEN_RATE_PER_MIN: '0', MAX_SESSIONS_PER_ADDRESS: '0', REQUEST_RATE_PER_SEC: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (chunk) => (log += chunk));
  child.stderr!.on('data', (chunk) => (log += chunk));
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${log}`)), 15_000);
    const onData = () => {
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(log);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', onData);
    exited.then(() => reject(new Error(`server exited: ${log}`)));
  });
  return { child, url, output: () => log, exited };
}
