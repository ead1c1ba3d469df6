// The builtin model on worker threads, off the event loop: each thread holds
// its own encoder (embedding-worker.ts), loaded on first use (or at start
// with EMBEDDING_PRELOAD=1). A call's texts are cut into jobs of a few texts
// (tens of ms each), queued per owner (a token's hash) and served
// round-robin across owners (FairQueue, the kernel pool's rule), so one
// caller embedding a thousand texts delays another by about one job per
// thread. Texts in flight are bounded per owner and in all: past either the
// call is refused at once (503 EMBEDDING_BUSY), never queued without end.
import { Worker } from 'node:worker_threads';
import { apiError } from '../errors.js';
import { FairQueue } from '../limits/fair-queue.js';
import type { Reservation } from '../limits/memory-budget.js';
import { BUILTIN_MODEL, type Embedder } from './embedder.js';
import type { EmbedJobMessage, EmbedWorkerMessage } from './embedding-worker.js';
import { TextsInFlight, type TextsInFlightLimits } from './texts-in-flight.js';
import { MODEL } from './weights.js';

const MiB = 1024 * 1024;

/** Texts per job: four of 128 tokens take about 100 ms on one core here, short ones about 15 ms. */
export const JOB_TEXTS = 4;

/** A thread's encoder memory before it reports it (weights 28 MiB, one chunk's activations 6.4 MiB). */
const ENCODER_BYTES_ESTIMATE = 34 * MiB;

/**
 * A thread's memory beside its encoder, counted with it: its isolate's heap (about 16 MiB after the
 * load: code, tokenizer tables) and what the allocator keeps of the load's buffers. A server's RSS
 * measured 60 MB more with a second thread preloaded than with one (2026-11-28).
 */
export const EMBEDDING_THREAD_HEAP_BYTES = 28 * MiB;

/** Bytes of one text's vector while its call is in flight. */
export const VECTOR_BYTES = MODEL.width * 4;

/** How long after a thread that could not start the pool tries again. */
const RESTART_DELAY_MS = 1000;

const WORKER_URL = new URL(import.meta.url.endsWith('.ts') ? './embedding-worker.ts' : './embedding-worker.js', import.meta.url);

export interface EmbeddingPoolLimits extends TextsInFlightLimits {
  threads: number;
}

/** The memory budget's side: bytes held for a thread (`thread`) or vectors in flight; throws 503 SERVER_AT_CAPACITY when they do not fit. */
export type Reserve = (bytes: number, message: string, thread: boolean) => Reservation;

interface Job {
  texts: string[];
  resolve: (vectors: Float32Array) => void;
  reject: (err: Error) => void;
}

interface Thread {
  worker: Worker;
  ready: boolean;
  job: Job | null;
  /** Its memory in the budget, from its start to its exit. */
  held: Reservation;
}

export class EmbeddingPool implements Embedder {
  readonly model = BUILTIN_MODEL;
  readonly dimensions = MODEL.width;
  private readonly threads: Thread[] = [];
  private readonly queue = new FairQueue<Job>();
  private readonly inFlight: TextsInFlight;
  private startAfter = 0;
  private closed = false;
  /** Jobs run since the start, and threads that died (metrics, tests). */
  jobsRun = 0;
  threadsReplaced = 0;

  constructor(
    readonly limits: EmbeddingPoolLimits,
    private readonly reserve: Reserve,
  ) {
    this.inFlight = new TextsInFlight(limits);
  }

  /** Texts being embedded or waiting, in all. */
  get textsInFlight(): number {
    return this.inFlight.total;
  }

  /** Threads started (loading or ready). */
  get size(): number {
    return this.threads.length;
  }

  async embed(texts: readonly string[], owner: string): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    this.inFlight.admit(texts.length, owner);
    let held: Reservation | undefined;
    try {
      held = this.reserve(texts.length * VECTOR_BYTES, "the server's memory budget is used up; nothing was embedded, try again later", false);
      this.warm();
      if (this.threads.length === 0) throw embeddingUnavailable('no embedding thread could start (the memory budget, or the model failed to load)');
      const jobs: Promise<Float32Array>[] = [];
      for (let at = 0; at < texts.length; at += JOB_TEXTS) jobs.push(this.run(owner, texts.slice(at, at + JOB_TEXTS)));
      const vectors: Float32Array[] = [];
      for (const out of await Promise.all(jobs)) for (let at = 0; at < out.length; at += MODEL.width) vectors.push(out.subarray(at, at + MODEL.width));
      return vectors;
    } finally {
      held?.release();
      this.inFlight.release(texts.length, owner);
    }
  }

  /** Start the threads now (EMBEDDING_PRELOAD=1, or a first call), as many as the budget holds; not within RESTART_DELAY_MS of one that could not start. */
  warm(): void {
    if (this.closed || performance.now() < this.startAfter) return;
    while (this.threads.length < this.limits.threads) {
      let held: Reservation;
      try {
        held = this.reserve(ENCODER_BYTES_ESTIMATE + EMBEDDING_THREAD_HEAP_BYTES, "the server's memory budget has no room for an embedding thread", true);
      } catch (err) {
        if (this.threads.length === 0) throw err;
        return;
      }
      this.threads.push(this.start(held));
    }
  }

  private start(held: Reservation): Thread {
    // Under tsx (tests, benches) the thread registers tsx before it loads the TypeScript source.
    const worker = WORKER_URL.pathname.endsWith('.ts')
      ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(WORKER_URL.href)}); });`, { eval: true })
      : new Worker(WORKER_URL);
    const thread: Thread = { worker, ready: false, job: null, held };
    worker.on('message', (message: EmbedWorkerMessage) => this.answered(thread, message));
    worker.on('error', () => this.replace(thread));
    worker.on('exit', () => this.replace(thread));
    worker.unref();
    return thread;
  }

  private answered(thread: Thread, message: EmbedWorkerMessage): void {
    if ('ready' in message) {
      thread.ready = true;
      thread.held.grow(message.memoryBytes - ENCODER_BYTES_ESTIMATE);
      this.pump();
      return;
    }
    const job = thread.job!;
    thread.job = null;
    thread.worker.unref();
    this.jobsRun++;
    if ('vectors' in message) job.resolve(message.vectors);
    else job.reject(new Error(`embedding failed: ${message.error}`));
    this.pump();
  }

  /** Fail the job a dead thread held; start another in its place, unless it died before it was ready (then jobs waiting fail too, rather than wait). */
  private replace(thread: Thread): void {
    const at = this.threads.indexOf(thread);
    if (at < 0) return;
    this.threads.splice(at, 1);
    thread.held.release();
    this.threadsReplaced++;
    thread.job?.reject(embeddingUnavailable('the thread embedding these texts stopped (out of memory or a fault) and was replaced'));
    thread.job = null;
    if (!thread.ready) this.startAfter = performance.now() + RESTART_DELAY_MS;
    else if (!this.closed) {
      try {
        this.warm();
      } catch {
        // No room in the budget now: the next call starts it.
      }
    }
    if (this.threads.length === 0) this.failWaiting();
    this.pump();
  }

  /** No thread is left to take the jobs waiting: fail them (503) rather than let them wait. */
  private failWaiting(): void {
    for (let job = this.queue.next(); job; job = this.queue.next()) job.reject(embeddingUnavailable('no embedding thread is running; try again shortly'));
  }

  private run(owner: string, texts: string[]): Promise<Float32Array> {
    return new Promise((resolve, reject) => {
      this.queue.push(owner, { texts, resolve, reject });
      this.pump();
    });
  }

  /** Give each ready, free thread the next job, owners in turn. */
  private pump(): void {
    for (const thread of this.threads) {
      if (!thread.ready || thread.job) continue;
      const job = this.queue.next();
      if (!job) return;
      thread.job = job;
      thread.worker.ref();
      thread.worker.postMessage({ texts: job.texts } satisfies EmbedJobMessage);
    }
  }

  /** The threads running a job now, for tests that kill one. */
  get busyWorkers(): Worker[] {
    return this.threads.filter((t) => t.job).map((t) => t.worker);
  }

  /** Refuse new calls, fail the jobs waiting and stop every thread. */
  async close(): Promise<void> {
    this.closed = true;
    const threads = this.threads.splice(0);
    this.failWaiting();
    await Promise.all(
      threads.map((t) => {
        t.held.release();
        return t.worker.terminate();
      }),
    );
  }
}

function embeddingUnavailable(message: string) {
  return apiError('EMBEDDING_UNAVAILABLE', message, undefined, { 'Retry-After': '1' });
}
