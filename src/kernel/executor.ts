// Where a search's kernel calls run, passed into the one search algorithm
// (search-steps.ts) as usearch passes its thread executor: this thread, one
// call after another, or a kernel pool's threads, side by side.
//
// A search is a generator of rounds (SearchSteps): each round is jobs of
// kernel calls; the driver runs them and sends back each call's result; the
// next round is laid out from them. runHere drives it on this thread,
// runOnPool on the pool's.
import type { KernelExports } from './kernel-module.js';
import type { KernelPool } from './kernel-pool.js';
import { POOL_MAX_SLICES, POOL_SLICE_WORK, runKernelCall, type KernelCall } from './search-path.js';
import { NO_HITS, type SearchHits } from './search-request.js';

export interface Executor {
  /** Threads the calls can run on at once: a search is cut into at least this many jobs. */
  readonly threads: number;
  /** The most work (queries x rows x dims) one job does; a larger search is cut further. */
  readonly sliceWork: number;
  /** The most jobs one round is cut into (each has scratch of its own). */
  readonly maxJobs: number;
  /** Whether each job needs a kernel work area of its own in the memory (a pool thread's instance does). */
  readonly ownWorkAreas: boolean;
}

/** This thread: the whole search in one job. */
export const THIS_THREAD: Executor = { threads: 1, sliceWork: Number.POSITIVE_INFINITY, maxJobs: 1, ownWorkAreas: false };

export interface PoolExecutor extends Executor {
  readonly pool: KernelPool;
}

/** The threads of `pool`; `sliceWork` below POOL_SLICE_WORK only in tests and benches (more, smaller jobs). */
export function onPool(pool: KernelPool, sliceWork = POOL_SLICE_WORK): PoolExecutor {
  return { pool, threads: pool.size, sliceWork, maxJobs: POOL_MAX_SLICES, ownWorkAreas: true };
}

/** Kernel calls run in order on one thread, in the work area laid out for it (0: the instance's own). */
export interface KernelJob {
  calls: KernelCall[];
  workArea: number;
}

/** Jobs that may run side by side; `small`: too little work to hand to another thread, run on this one whatever the executor. */
export interface Round {
  jobs: KernelJob[];
  small: boolean;
}

/** A search as rounds of jobs; each round is sent back its results, job by job, call by call. */
export type SearchSteps = Generator<Round, SearchHits, number[][]>;

/** Run every round on this thread. */
export function runHere(kernel: KernelExports, steps: SearchSteps): SearchHits {
  try {
    let step = steps.next();
    while (!step.done) step = steps.next(runJobsHere(kernel, step.value.jobs));
    return step.value;
  } finally {
    // After a throw the steps are suspended: ending them gives their scratch back.
    steps.return(NO_HITS);
  }
}

/** Run the rounds on the pool's threads (a small one on this thread). Its scratch is held before this returns. */
export async function runOnPool(
  executor: PoolExecutor,
  instance: number,
  memory: WebAssembly.Memory,
  kernel: KernelExports,
  steps: SearchSteps,
): Promise<SearchHits> {
  try {
    let step = steps.next();
    while (!step.done) {
      const { jobs, small } = step.value;
      step = steps.next(small ? runJobsHere(kernel, jobs) : await runJobsOnPool(executor.pool, instance, memory, jobs));
    }
    return step.value;
  } finally {
    steps.return(NO_HITS);
  }
}

function runJobsHere(kernel: KernelExports, jobs: KernelJob[]): number[][] {
  return jobs.map((job) => job.calls.map((call) => runKernelCall(kernel, call)));
}

async function runJobsOnPool(pool: KernelPool, instance: number, memory: WebAssembly.Memory, jobs: KernelJob[]): Promise<number[][]> {
  // Every job settled before the scratch is given back: a failed search must not leave one still writing.
  const settled = await Promise.allSettled(jobs.map((job) => pool.run(instance, memory, job.workArea, job.calls)));
  const failed = settled.find((run) => run.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((run) => (run as PromiseFulfilledResult<number[]>).value);
}
