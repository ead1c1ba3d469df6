// Worker threads that run kernel calls over shared session memories. The
// main thread lays out every call (KernelInstance) and merges the results;
// a thread only runs the call. A thread that dies fails only the calls it
// held (KernelUnavailableError) and is replaced.
import { Worker } from 'node:worker_threads';
import type { KernelCall } from './search-path.js';
import type { WorkerRequest } from './kernel-worker.js';

/** A kernel call could not run: its thread died (out of memory, a trap) or the pool is closed. */
export class KernelUnavailableError extends Error {}

const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './kernel-worker.ts' : './kernel-worker.js', import.meta.url);

interface Pending {
  resolve: (result: number) => void;
  reject: (err: Error) => void;
}

interface Thread {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Session memories this thread has instantiated the kernel over. */
  sessions: Set<number>;
}

export class KernelPool {
  private readonly threads: Thread[] = [];
  private nextId = 0;
  private closed = false;
  private readonly inFlight = new Set<Promise<number>>();

  /** `module`: the shared-memory kernel build (build/kernel.shared.wasm). */
  constructor(readonly size: number, private readonly module: WebAssembly.Module) {
    for (let i = 0; i < size; i++) this.threads.push(this.start());
  }

  private start(): Thread {
    const workerData = { module: this.module };
    // Under tsx (tests, benches) the thread registers tsx before it loads the TypeScript source.
    const worker = WORKER_URL.pathname.endsWith('.ts')
      ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}); });`, { eval: true, workerData })
      : new Worker(WORKER_URL, { workerData });
    const thread: Thread = { worker, pending: new Map(), sessions: new Set() };
    worker.on('message', ({ id, result }: { id: number; result: number }) => {
      const call = thread.pending.get(id);
      thread.pending.delete(id);
      if (thread.pending.size === 0) worker.unref();
      call?.resolve(result);
    });
    worker.on('error', () => this.replace(thread));
    worker.on('exit', () => this.replace(thread));
    // Only a thread with calls in flight keeps the process alive.
    worker.unref();
    return thread;
  }

  /** Fail what a dead thread held, and start another in its place. */
  private replace(thread: Thread): void {
    const at = this.threads.indexOf(thread);
    if (at < 0) return;
    for (const call of thread.pending.values()) call.reject(new KernelUnavailableError('kernel thread died'));
    thread.pending.clear();
    if (this.closed) this.threads.splice(at, 1);
    else this.threads[at] = this.start();
  }

  /** Run `call` over session `session`'s memory with the work area at `workArea`, on the least busy thread. */
  run(session: number, memory: WebAssembly.Memory, workArea: number, call: KernelCall): Promise<number> {
    if (this.closed || this.threads.length === 0) return Promise.reject(new KernelUnavailableError('kernel pool closed'));
    let thread = this.threads[0];
    for (const t of this.threads) if (t.pending.size < thread.pending.size) thread = t;
    const id = this.nextId++;
    const request: WorkerRequest = { id, session, workArea, call };
    if (!thread.sessions.has(session)) {
      request.memory = memory;
      thread.sessions.add(session);
    }
    const done = new Promise<number>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.ref();
      thread.worker.postMessage(request);
    });
    this.inFlight.add(done);
    const forget = () => { this.inFlight.delete(done); };
    done.then(forget, forget);
    return done;
  }

  /** Drop a session's kernel instances from every thread (its memory can then be freed). */
  release(session: number): void {
    for (const thread of this.threads) {
      if (thread.sessions.delete(session)) thread.worker.postMessage({ release: session });
    }
  }

  /** The threads, for tests that kill one. */
  get workers(): Worker[] {
    return this.threads.map((t) => t.worker);
  }

  /** Wait for the calls in flight (SIGTERM drains), then stop every thread. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }
}
