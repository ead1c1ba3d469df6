// Worker threads that run jobs of kernel calls over shared kernel instance
// memories (one per session). The main thread lays out every job
// (search-steps.ts) and merges the results; a thread only runs the calls.
//
// Fairness: a thread runs one job at a time, and jobs wait here, queued per
// instance, served round-robin across instances. A search is cut into jobs
// of bounded work (POOL_SLICE_WORK), so a session with many heavy searches
// delays another by about one job per thread.
//
// A thread that dies (out of memory, a kernel trap) fails only the job it
// held (KernelUnavailableError) and is replaced.
import { Worker } from 'node:worker_threads';
import { FairQueue } from '../limits/fair-queue.js';
import type { KernelCall } from './search-path.js';
import type { WorkerRequest } from './kernel-worker.js';

/** A job could not run: its thread died (out of memory, a trap) or the pool is closed. */
export class KernelUnavailableError extends Error {}

/** How long after a thread that could not start the pool tries again. */
const RESTART_DELAY_MS = 1000;

const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './kernel-worker.ts' : './kernel-worker.js', import.meta.url);

interface Job {
  instance: number;
  memory: WebAssembly.Memory;
  workArea: number;
  calls: KernelCall[];
  resolve: (results: number[]) => void;
  reject: (err: Error) => void;
}

interface Thread {
  worker: Worker;
  /** It has loaded the kernel and listens (its first message). */
  ready: boolean;
  /** The job it runs, if any. */
  job: Job | null;
  /** Instances whose memory this thread has instantiated the kernel over. */
  instances: Set<number>;
}

export class KernelPool {
  private readonly threads: Thread[] = [];
  /** Jobs waiting, per instance, served round-robin (src/limits/fair-queue.ts). */
  private readonly queue = new FairQueue<Job>();
  /** Jobs queued or running, per instance (a released instance is dropped from the threads when it has none). */
  private readonly held = new Map<number, number>();
  private readonly releasing = new Set<number>();
  private closed = false;
  /** Jobs run to the end since the pool started (tests and metrics). */
  jobsRun = 0;
  /** Threads that died and were replaced (metrics). */
  threadsReplaced = 0;
  private idle: (() => void) | null = null;

  /** `module`: the shared-memory kernel build (build/kernel.shared.wasm). Threads start with the first job. */
  constructor(
    readonly size: number,
    private readonly module: WebAssembly.Module,
  ) {}

  /** Start the threads now rather than with the first job (not within RESTART_DELAY_MS of one that could not start). */
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
    const thread: Thread = { worker, ready: false, job: null, instances: new Set() };
    worker.on('message', (message: { results: number[] } | { ready: true }) => {
      if ('ready' in message) {
        thread.ready = true;
        return;
      }
      const { results } = message;
      const job = thread.job!;
      thread.job = null;
      worker.unref();
      this.jobsRun++;
      this.jobDone(job);
      job.resolve(results);
      this.pump();
    });
    worker.on('error', () => this.replace(thread));
    worker.on('exit', () => this.replace(thread));
    // Only a thread with a job in flight keeps the process alive.
    worker.unref();
    return thread;
  }

  /** Fail the job a dead thread held, and start another in its place. */
  private replace(thread: Thread): void {
    const at = this.threads.indexOf(thread);
    if (at < 0) return;
    const job = thread.job;
    thread.job = null;
    this.threadsReplaced++;
    // A thread that dies before it is ready (it could not start: no memory, no threads left) is not
    // replaced at once, or the pool would spin starting threads; jobs meanwhile fail (503), not wait.
    const stillborn = !thread.ready;
    if (this.closed || stillborn) this.threads.splice(at, 1);
    else this.threads[at] = this.start();
    if (stillborn && !this.closed) this.startAfter = performance.now() + RESTART_DELAY_MS;
    if (job) {
      this.jobDone(job);
      job.reject(new KernelUnavailableError('kernel thread died'));
    }
    this.pump();
  }

  /**
   * Run `calls`, in order on one thread, over instance `instance`'s memory with
   * the work area at `workArea`, when its turn comes: each call's result.
   */
  run(instance: number, memory: WebAssembly.Memory, workArea: number, calls: KernelCall[]): Promise<number[]> {
    if (this.closed) return Promise.reject(new KernelUnavailableError('kernel pool closed'));
    this.warm();
    return new Promise<number[]>((resolve, reject) => {
      this.queue.push(String(instance), { instance, memory, workArea, calls, resolve, reject });
      this.held.set(instance, (this.held.get(instance) ?? 0) + 1);
      this.pump();
    });
  }

  /** Threads running a job now. */
  get running(): number {
    return this.threads.filter((t) => t.job).length;
  }

  /** Jobs waiting for a thread, across instances. */
  get queued(): number {
    return this.queue.length;
  }

  /** Give each free thread the next job, taking instances in turn. */
  private pump(): void {
    if (this.threads.length === 0) {
      for (let job = this.queue.next(); job; job = this.queue.next()) {
        this.jobDone(job);
        job.reject(new KernelUnavailableError('kernel pool closed'));
      }
    }
    for (const thread of this.threads) {
      if (thread.job) continue;
      const job = this.queue.next();
      if (!job) return;
      this.send(thread, job);
    }
  }

  private send(thread: Thread, job: Job): void {
    const request: WorkerRequest = { instance: job.instance, workArea: job.workArea, calls: job.calls };
    if (!thread.instances.has(job.instance)) {
      request.memory = job.memory;
      thread.instances.add(job.instance);
    }
    thread.job = job;
    thread.worker.ref();
    thread.worker.postMessage(request);
  }

  /** A job is done: count it off, and drop a released instance from the threads once it has none left. */
  private jobDone(job: Job): void {
    const left = (this.held.get(job.instance) ?? 1) - 1;
    if (left > 0) {
      this.held.set(job.instance, left);
      return;
    }
    this.held.delete(job.instance);
    if (this.releasing.delete(job.instance)) this.dropFromThreads(job.instance);
    if (this.held.size === 0) this.idle?.();
  }

  /** Drop an instance from every thread (its memory can then be freed), once its jobs are done. */
  release(instance: number): void {
    if (this.held.has(instance)) this.releasing.add(instance);
    else this.dropFromThreads(instance);
  }

  private dropFromThreads(instance: number): void {
    for (const thread of this.threads) {
      if (thread.instances.delete(instance)) thread.worker.postMessage({ release: instance });
    }
  }

  /** The threads, for tests that kill one. */
  get workers(): Worker[] {
    return this.threads.map((t) => t.worker);
  }

  /** The threads running a job now, for tests that kill one. */
  get busyWorkers(): Worker[] {
    return this.threads.filter((t) => t.job).map((t) => t.worker);
  }

  /** Refuse new jobs, let the ones queued and running finish (SIGTERM drains), then stop every thread. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.held.size > 0)
      await new Promise<void>((resolve) => {
        this.idle = resolve;
      });
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }
}
