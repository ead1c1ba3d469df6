// Worker threads that run kernel calls over shared session memories. The
// main thread lays out every call (KernelInstance) and merges the results;
// a thread only runs the call.
//
// Fairness: a thread runs one call at a time, and calls wait here, queued
// per session, served round-robin across sessions. A search is cut into
// calls of bounded work (KernelInstance.poolSlices), so a session with many
// heavy searches delays another by about one call per thread.
//
// A thread that dies (out of memory, a kernel trap) fails only the call it
// held (KernelUnavailableError) and is replaced.
import { Worker } from 'node:worker_threads';
import type { KernelCall } from './search-path.js';
import type { WorkerRequest } from './kernel-worker.js';

/** A kernel call could not run: its thread died (out of memory, a trap) or the pool is closed. */
export class KernelUnavailableError extends Error {}

/** How long after a thread that could not start the pool tries again. */
const RESTART_DELAY_MS = 1000;

const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './kernel-worker.ts' : './kernel-worker.js', import.meta.url);

interface Job {
  session: number;
  memory: WebAssembly.Memory;
  workArea: number;
  call: KernelCall;
  resolve: (result: number) => void;
  reject: (err: Error) => void;
}

interface Thread {
  worker: Worker;
  /** It has loaded the kernel and listens (its first message). */
  ready: boolean;
  /** The call it runs, if any. */
  job: Job | null;
  /** Session memories this thread has instantiated the kernel over. */
  sessions: Set<number>;
}

export class KernelPool {
  private readonly threads: Thread[] = [];
  /** Calls waiting, per session; the Map's order is the round-robin order. */
  private readonly queues = new Map<number, Job[]>();
  /** Calls queued or running, per session (a released session is dropped from the threads when it has none). */
  private readonly held = new Map<number, number>();
  private readonly releasing = new Set<number>();
  private closed = false;
  /** Calls run to the end since the pool started (tests and metrics). */
  callsRun = 0;
  /** Threads that died and were replaced (metrics). */
  threadsReplaced = 0;
  private idle: (() => void) | null = null;

  /** `module`: the shared-memory kernel build (build/kernel.shared.wasm). Threads start with the first call. */
  constructor(readonly size: number, private readonly module: WebAssembly.Module) {}

  /** Start the threads now rather than with the first call (not within RESTART_DELAY_MS of one that could not start). */
  warm(): void {
    if (performance.now() < this.startAfter) return;
    while (!this.closed && this.threads.length < this.size) this.threads.push(this.start());
  }

  /** No thread starts before this time (performance.now()). */
  private startAfter = 0;

  private start(): Thread {
    const workerData = { module: this.module };
    // Under tsx (tests, benches) the thread registers tsx before it loads the TypeScript source.
    const worker = WORKER_URL.pathname.endsWith('.ts')
      ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}); });`, { eval: true, workerData })
      : new Worker(WORKER_URL, { workerData });
    const thread: Thread = { worker, ready: false, job: null, sessions: new Set() };
    worker.on('message', (message: { result: number } | { ready: true }) => {
      if ('ready' in message) {
        thread.ready = true;
        return;
      }
      const { result } = message;
      const job = thread.job!;
      thread.job = null;
      worker.unref();
      this.callsRun++;
      this.callDone(job);
      job.resolve(result);
      this.pump();
    });
    worker.on('error', () => this.replace(thread));
    worker.on('exit', () => this.replace(thread));
    // Only a thread with a call in flight keeps the process alive.
    worker.unref();
    return thread;
  }

  /** Fail what a dead thread held, and start another in its place. */
  private replace(thread: Thread): void {
    const at = this.threads.indexOf(thread);
    if (at < 0) return;
    const job = thread.job;
    thread.job = null;
    this.threadsReplaced++;
    // A thread that dies before it is ready (it could not start: no memory, no threads left) is not
    // replaced at once, or the pool would spin starting threads; calls meanwhile fail (503), not wait.
    const stillborn = !thread.ready;
    if (this.closed || stillborn) this.threads.splice(at, 1);
    else this.threads[at] = this.start();
    if (stillborn && !this.closed) this.startAfter = performance.now() + RESTART_DELAY_MS;
    if (job) {
      this.callDone(job);
      job.reject(new KernelUnavailableError('kernel thread died'));
    }
    this.pump();
  }

  /** Run `call` over session `session`'s memory with the work area at `workArea`, when its turn comes. */
  run(session: number, memory: WebAssembly.Memory, workArea: number, call: KernelCall): Promise<number> {
    if (this.closed) return Promise.reject(new KernelUnavailableError('kernel pool closed'));
    this.warm();
    return new Promise<number>((resolve, reject) => {
      let queue = this.queues.get(session);
      if (!queue) {
        queue = [];
        this.queues.set(session, queue);
      }
      queue.push({ session, memory, workArea, call, resolve, reject });
      this.held.set(session, (this.held.get(session) ?? 0) + 1);
      this.pump();
    });
  }

  /** Threads running a call now. */
  get running(): number {
    return this.threads.filter((t) => t.job).length;
  }

  /** Calls waiting for a thread, across sessions. */
  get queued(): number {
    let n = 0;
    for (const queue of this.queues.values()) n += queue.length;
    return n;
  }

  /** Give each free thread the next call, taking sessions in turn. */
  private pump(): void {
    if (this.threads.length === 0) {
      for (let job = this.next(); job; job = this.next()) {
        this.callDone(job);
        job.reject(new KernelUnavailableError('kernel pool closed'));
      }
    }
    for (const thread of this.threads) {
      if (thread.job) continue;
      const job = this.next();
      if (!job) return;
      this.send(thread, job);
    }
  }

  /** The first session's next call; that session then goes to the back of the line. */
  private next(): Job | undefined {
    for (const [session, queue] of this.queues) {
      this.queues.delete(session);
      const job = queue.shift();
      if (queue.length > 0) this.queues.set(session, queue);
      if (job) return job;
    }
    return undefined;
  }

  private send(thread: Thread, job: Job): void {
    const request: WorkerRequest = { session: job.session, workArea: job.workArea, call: job.call };
    if (!thread.sessions.has(job.session)) {
      request.memory = job.memory;
      thread.sessions.add(job.session);
    }
    thread.job = job;
    thread.worker.ref();
    thread.worker.postMessage(request);
  }

  /** A call is done: count it off, and drop a released session from the threads once it has none left. */
  private callDone(job: Job): void {
    const left = (this.held.get(job.session) ?? 1) - 1;
    if (left > 0) {
      this.held.set(job.session, left);
      return;
    }
    this.held.delete(job.session);
    if (this.releasing.delete(job.session)) this.dropFromThreads(job.session);
    if (this.held.size === 0) this.idle?.();
  }

  /** Drop a session's kernel instances from every thread (its memory can then be freed), once its calls are done. */
  release(session: number): void {
    if (this.held.has(session)) this.releasing.add(session);
    else this.dropFromThreads(session);
  }

  private dropFromThreads(session: number): void {
    for (const thread of this.threads) {
      if (thread.sessions.delete(session)) thread.worker.postMessage({ release: session });
    }
  }

  /** The threads, for tests that kill one. */
  get workers(): Worker[] {
    return this.threads.map((t) => t.worker);
  }

  /** The threads running a call now, for tests that kill one. */
  get busyWorkers(): Worker[] {
    return this.threads.filter((t) => t.job).map((t) => t.worker);
  }

  /** Refuse new calls, let the ones queued and running finish (SIGTERM drains), then stop every thread. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.held.size > 0) await new Promise<void>((resolve) => { this.idle = resolve; });
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }
}
