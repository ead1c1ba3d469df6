// Step 1 of an int8 search (search-steps.ts int8Search) as a pure function:
// how its first stages are cut into ranges of rows and grouped into jobs,
// and where each one's scratch lies, from numbers alone (no memory read).
import type { Executor } from './executor.js';
import { align16, int8ScratchFor, scratchFor, type Layout, type ScratchLayout } from './layout.js';
import { int8RowParts } from './search-path.js';

/** What an int8 search's plan depends on. */
export interface Int8PlanInput {
  /** The instance's layout (its dim and codeStride size the scratch). */
  layout: Layout;
  /** Where the search's scratch may start: past that of the searches in flight. */
  scratchBase: number;
  executor: Pick<Executor, 'threads' | 'sliceWork' | 'maxJobs' | 'ownWorkAreas'>;
  queryCount: number;
  k: number;
  candidates: number;
  /** Rows each query scans: the row list's length, or the stored rows. */
  scanned: number;
  /** Whether the scanned rows are a row list (written once at rowListAt). */
  withRowList: boolean;
  /** The kernel's KEYS_FIRST_MIN_POOL: from this pool on a first stage stores every key, then selects. */
  keysFirstMinPool: number;
  /** The kernel's WORK_AREA_BYTES: a job's own work area on a pool thread. */
  workAreaBytes: number;
}

/** One first stage: query q over scanned rows [r0, r1), its scratch, and where it runs (call `call` of job `job`). */
export interface Int8Stage {
  q: number;
  r0: number;
  r1: number;
  scratch: ReturnType<typeof int8ScratchFor>;
  job: number;
  call: number;
}

export interface Int8Plan {
  /** The layout planned over (the steps read the rows through it from first stage to re-ranking). */
  layout: Layout;
  /** Ranges each query's first stage is cut into. */
  rowParts: number;
  /** Where the row list is written, once for every stage. */
  rowListAt: number;
  /** Query by query, range by range. */
  stages: Int8Stage[];
  /** Per first-stage job: its keys (0: the pool is small) and its work area (0: the instance's own). */
  jobs: { keys: number; workArea: number }[];
  /** Per query its re-ranking's scratch (with room for the merged candidates when rowParts > 1) and the job it runs in. */
  reranks: { scratch: ScratchLayout; job: number }[];
  /** Re-ranking jobs (they reuse the first jobs' work areas). */
  rerankJobs: number;
  /** End of the search's scratch. */
  end: number;
}

/**
 * The plan: the row list once; per stage its query and selection; per job
 * its keys (a large pool) and work area; per query its re-ranking. Stages
 * are cut into ranges only on a pool (fewer queries than threads, or long
 * scans); consecutive stages share a job.
 */
export function planInt8(input: Int8PlanInput): Int8Plan {
  const { layout, executor, queryCount, scanned, candidates } = input;
  const rowParts = executor.threads > 1 ? int8RowParts(executor.threads, queryCount, scanned, layout.dim, executor.sliceWork) : 1;
  const rowStep = Math.ceil(scanned / rowParts);
  const at = (base: number) => ({ ...layout, scratch: base });
  const rowListAt = input.scratchBase;
  let base = align16(rowListAt + (input.withRowList ? scanned * 4 : 0));
  const stageCount = queryCount * Math.ceil(scanned / rowStep);
  const perJob = Math.ceil(stageCount / Math.min(stageCount, executor.maxJobs));
  const stages: Int8Stage[] = [];
  for (let q = 0; q < queryCount; q++) {
    for (let r0 = 0; r0 < scanned; r0 += rowStep) {
      const scratch = int8ScratchFor(at(base), 0, candidates);
      const s = stages.length;
      stages.push({ q, r0, r1: Math.min(scanned, r0 + rowStep), scratch, job: Math.floor(s / perJob), call: s % perJob });
      base = align16(scratch.end);
    }
  }
  const keysBytes = candidates >= input.keysFirstMinPool ? Math.ceil(rowStep / 4) * 16 : 0;
  const workAreaBytes = executor.ownWorkAreas ? input.workAreaBytes : 0;
  const jobs: Int8Plan['jobs'] = [];
  for (let j = 0; j * perJob < stages.length; j++) {
    const keys = base;
    const workArea = align16(keys + keysBytes);
    base = align16(workArea + workAreaBytes);
    jobs.push({ keys: keysBytes > 0 ? keys : 0, workArea: executor.ownWorkAreas ? workArea : 0 });
  }
  const rerankJobs = Math.min(jobs.length, queryCount);
  const perRerankJob = Math.ceil(queryCount / rerankJobs);
  const reranks = Array.from({ length: queryCount }, (_, q) => {
    const scratch = scratchFor(at(base), 1, rowParts > 1 ? candidates : 0, input.k);
    base = align16(scratch.end);
    return { scratch, job: Math.floor(q / perRerankJob) };
  });
  return { layout, rowParts, rowListAt, stages, jobs, reranks, rerankJobs, end: base };
}
