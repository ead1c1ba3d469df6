// Runs K tempvec instances on this machine and nginx in front of them on one
// port (src/cluster/nginx-config.ts). Each instance gets its own port,
// INSTANCE_ID and, with DATA_DIR, its own DATA_DIR/<id>; the kernel threads
// and the default memory budget are divided among them. stop() drains every
// instance (SIGTERM) and nginx.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../config.js';
import { clusterLimits, serverConfig, type PerAddressLimits, type Upstream } from './nginx-config.js';

export interface ClusterOptions {
  instances: number;
  /** nginx's port (0: a free one). */
  port: number;
  /** nginx's address. */
  host: string;
  /** With a directory, instance <id> keeps its sessions in DATA_DIR/<id>. */
  dataDir: string;
  maxBodyBytes: number;
  maxImportBytes: number;
  /** The environment of the instances (PORT, HOST, INSTANCE_ID, DATA_DIR and KERNEL_THREADS are set per instance). */
  env: Record<string, string | undefined>;
  nginx: string;
  /** The server's entry and node's arguments before it. */
  server: { script: string; nodeArgs: string[] };
  /** Restart an instance that exited on its own after this long; 0: leave it down. */
  respawnMs: number;
  workerProcesses: number;
  /** The internal listener's port on 127.0.0.1 (/healthz, /readyz, /metrics); 0: a free one. */
  internalPort?: number;
  /** Per-address limits other than the defaults derived from the instances' configuration (clusterLimits). */
  perAddress?: Partial<PerAddressLimits>;
  log: (line: string) => void;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The server as `npm start` runs it (its Node flag included: test/cluster/launcher.test.ts compares them). */
export const DIST_SERVER = { script: join(ROOT, 'dist/server.js'), nodeArgs: ['--initial-old-space-size=128'] };
/** nginx has no IPC channel: this small process stops it (SIGQUIT) when the launcher goes, even by SIGKILL, and so its channel closes. */
const NGINX_WATCHDOG = "process.on('disconnect', () => { try { process.kill(Number(process.argv[1]), 'SIGQUIT'); } catch {} process.exit(0); });";
/** How long an instance may take to list its sessions and listen. */
const START_TIMEOUT_MS = 60_000;
/** How long stop() waits for instances to drain before SIGKILL (they give up after 10 s themselves). */
const STOP_TIMEOUT_MS = 15_000;

export interface Instance {
  id: string;
  port: number;
  url: string;
  child?: ChildProcess;
  exited?: Promise<number | string>;
}

/** nginx on PATH or in /usr/sbin; undefined when it is not installed. */
export function findNginx(env = process.env): string | undefined {
  const dirs = [...(env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'].filter(Boolean);
  return dirs.map((dir) => join(dir, 'nginx')).find((path) => existsSync(path));
}

/**
 * Ports freePort tries, below the ephemeral ranges (Linux 32768-60999, BSD and macOS 49152-65535):
 * a port the system hands out by itself (an outgoing connection's, a listen(0)'s) can be taken
 * between freePort's check and the bind it is for (CI saw nginx's bind fail so, once).
 */
const PORTS_FROM = 10_000;
const PORTS_TO = 32_768;

/** A TCP port free on loopback now, one the system does not hand out by itself. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = PORTS_FROM + Math.floor(Math.random() * (PORTS_TO - PORTS_FROM));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port on 127.0.0.1 in ${PORTS_FROM}-${PORTS_TO - 1} after 100 tries`);
}

/** Whether a listener could bind `port` on loopback just now. */
async function canListen(port: number): Promise<boolean> {
  const server = createServer();
  try {
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
  } catch {
    return false;
  }
  await new Promise((resolve) => server.close(resolve));
  return true;
}

/** Kernel threads per instance: the machine's cores divided among the instances, at least one. */
export const kernelThreadsPerInstance = (instances: number, cores = availableParallelism()) => Math.max(1, Math.floor(cores / instances));

export class Cluster {
  readonly instances: Instance[] = [];
  url = '';
  /** The internal listener: /healthz, /readyz and /metrics (any instance's), /<id>/metrics (instance <id>'s). */
  internalUrl = '';
  private nginx?: { child: ChildProcess; exited: Promise<number | string> };
  private prefix = '';
  private stopping = false;

  constructor(private readonly options: ClusterOptions) {}

  get nginxPrefix(): string {
    return this.prefix;
  }

  async start(): Promise<void> {
    const { instances, options } = { instances: this.instances, options: this.options };
    for (let i = 1; i <= options.instances; i++) {
      const port = await freePort();
      instances.push({ id: `i${i}`, port, url: `http://127.0.0.1:${port}` });
    }
    try {
      await Promise.all(instances.map((instance) => this.startInstance(instance)));
      await this.startNginx();
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  instance(id: string): Instance {
    const found = this.instances.find((instance) => instance.id === id);
    if (!found) throw new Error(`no instance ${id}`);
    return found;
  }

  /** Start instance `id` again (after it exited), on its port and data directory. */
  restart(id: string): Promise<void> {
    return this.startInstance(this.instance(id));
  }

  /** Send `signal` to instance `id` and wait for it to exit (SIGKILL: no draining, no respawn until restart()). */
  async kill(id: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const instance = this.instance(id);
    const { child, exited } = instance;
    if (!child || !exited) return;
    instance.child = undefined;
    child.kill(signal);
    await exited;
  }

  /** Drain the instances (SIGTERM, then SIGKILL after STOP_TIMEOUT_MS) and stop nginx. */
  async stop(): Promise<void> {
    this.stopping = true;
    const waits: Promise<unknown>[] = [];
    if (this.nginx) {
      this.nginx.child.kill('SIGQUIT'); // graceful: finishes the requests it is proxying
      waits.push(this.nginx.exited);
    }
    for (const instance of this.instances) {
      const { child, exited } = instance;
      if (!child || !exited) continue;
      instance.child = undefined;
      child.kill('SIGTERM');
      waits.push(exited);
    }
    const all = Promise.all(waits);
    const timer = setTimeout(() => {
      this.options.log(`still running after ${STOP_TIMEOUT_MS} ms: killing`);
      this.nginx?.child.kill('SIGKILL');
    }, STOP_TIMEOUT_MS);
    await all;
    clearTimeout(timer);
    if (this.prefix) rmSync(this.prefix, { recursive: true, force: true });
  }

  private async startInstance(instance: Instance): Promise<void> {
    const { options } = this;
    const env: Record<string, string | undefined> = {
      ...options.env,
      PORT: String(instance.port),
      HOST: '127.0.0.1',
      INSTANCE_ID: instance.id,
      DATA_DIR: options.dataDir ? join(options.dataDir, instance.id) : '',
      KERNEL_THREADS: String(kernelThreadsPerInstance(options.instances)),
      // The default budget (a quarter of the machine's memory) is the machine's: shared by the instances.
      MEMORY_BUDGET_BYTES: options.env.MEMORY_BUDGET_BYTES || String(Math.floor(loadConfig({}).memoryBudgetBytes / options.instances)),
      // nginx sets X-Forwarded-For to the client's address: the per-address limit of POST /token applies per client.
      TRUST_PROXY: '1',
    };
    // With an IPC channel: an instance drains and exits when this launcher dies, even by SIGKILL (src/server.ts).
    const child = spawn(process.execPath, [...options.server.nodeArgs, options.server.script], { env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
    instance.child = child;
    instance.exited = exited;
    let output = '';
    const listening = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`instance ${instance.id} did not start in ${START_TIMEOUT_MS} ms:\n${output}`)), START_TIMEOUT_MS);
      const onLine = (chunk: Buffer) => {
        output += chunk;
        for (const line of String(chunk).split('\n')) if (line) options.log(`[${instance.id}] ${line}`);
        if (/listening on http/.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', onLine);
      child.stderr!.on('data', onLine);
      exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`instance ${instance.id} exited (${code}) while starting:\n${output}`));
      });
    });
    exited.then((code) => {
      // Exited on its own (not killed or stopped through this class): report, and respawn if asked.
      if (instance.child !== child || this.stopping) return;
      instance.child = undefined;
      options.log(`instance ${instance.id} exited (${code})${options.respawnMs ? `; restarting in ${options.respawnMs} ms` : ''}`);
      if (options.respawnMs) {
        setTimeout(() => {
          if (!this.stopping && !instance.child) this.startInstance(instance).catch((err) => options.log(String(err)));
        }, options.respawnMs);
      }
    });
    await listening;
  }

  private async startNginx(): Promise<void> {
    const { options } = this;
    this.prefix = mkdtempSync(join(tmpdir(), 'tempvec-nginx-'));
    // Started by root, nginx's workers run as nobody: they must get through the prefix to the
    // temporary directories nginx makes for them (their own, mode 0700).
    chmodSync(this.prefix, 0o711);
    const port = options.port || (await freePort());
    const internalPort = options.internalPort || (await freePort());
    // The instances' own configuration (the environment they get): nginx applies their timeouts.
    const limits = clusterLimits(loadConfig(options.env));
    const listen = `${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
    const upstreams: Upstream[] = this.instances.map(({ id, port: p }) => ({ id, host: '127.0.0.1', port: p }));
    const file = join(this.prefix, 'nginx.conf');
    writeFileSync(
      file,
      serverConfig({
        listen,
        upstreams,
        maxBodyBytes: options.maxBodyBytes,
        maxImportBytes: options.maxImportBytes,
        internalListen: `127.0.0.1:${internalPort}`,
        timeouts: limits.timeouts,
        perAddress: { ...limits.perAddress, ...options.perAddress },
        prefix: this.prefix,
        workerProcesses: options.workerProcesses,
      }),
    );
    const child = spawn(options.nginx, ['-p', this.prefix, '-c', file, '-e', join(this.prefix, 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
    const watchdog = spawn(process.execPath, ['-e', NGINX_WATCHDOG, String(child.pid)], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
    exited.then(() => watchdog.kill('SIGKILL'));
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    this.nginx = { child, exited };
    this.url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
    this.internalUrl = `http://127.0.0.1:${internalPort}`;
    let down = false;
    exited.then((code) => {
      down = true;
      if (!this.stopping) options.log(`nginx exited (${code}): ${output}`);
    });
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (down) throw new Error(`nginx did not start: ${output}`);
      try {
        const res = await fetch(`${this.internalUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
        await res.arrayBuffer();
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`nginx did not answer on ${this.internalUrl} within 10 s: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** nginx's master process. */
  get nginxPid(): number | undefined {
    return this.nginx?.child.pid;
  }

  /** Resolves when nginx exits (it should not, before stop()). */
  get nginxExited(): Promise<number | string> | undefined {
    return this.nginx?.exited;
  }
}
