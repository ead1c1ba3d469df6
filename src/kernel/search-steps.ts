// The one algorithm of a search over a kernel instance, whatever runs it
// (executor.ts), in three labelled steps as usearch's exact_search_t:
//   1. plan: cut the search into jobs (blocks of queries x ranges of rows)
//      sized for the executor, and lay out each one's scratch after the
//      searches in flight;
//   2. run: write the queries (normalised once) and the row list, and yield
//      the jobs to the executor;
//   3. merge: each query's best across its jobs, by key then insertion
//      sequence, converted to scores once.
// A row's key is the same arithmetic wherever it is scanned and ties go by
// insertion sequence, so every cut gives the same rows, scores and order.
// int8 storage runs steps 1-3 twice: a first stage by the codes keeps each
// query's candidates, then an exact float32 re-ranking of them (its plan,
// planInt8, in int8-plan.ts).
import type { Metric } from '../config.js';
import type { Executor, KernelJob, SearchSteps } from './executor.js';
import { inverseNorm } from './inverse-norm.js';
import type { KernelExports } from './kernel-module.js';
import { type Int8Plan, type Int8Stage, planInt8 } from './int8-plan.js';
import { align16, scratchFor, type Layout, type ScratchLayout } from './layout.js';
import { quantizeInto } from './quantize.js';
import { int8StageCallOf, kernelCallOf, POOL_MIN_WORK, rerankCallOf, singleQueryPath, type SingleQueryPathName, type SingleQueryPaths } from './search-path.js';
import type { CheckedRequest, MemoryGuard, SearchHits } from './search-request.js';

/** What a search sees of the instance it runs over (KernelInstance.space). */
export interface SearchSpace {
  readonly kernel: KernelExports;
  readonly metric: Metric;
  readonly metricCode: number;
  readonly layout: Layout;
  readonly paths: SingleQueryPaths;
  /** Where a search's scratch may start: past that of the searches in flight. */
  readonly scratchBase: number;
  /** Whether the memory holds `bytes`, or `guard` lets it grow to (asking only). */
  allows(bytes: number, guard: MemoryGuard | null): boolean;
  /** Grow to hold scratch up to `end` (asking `guard`; throws to refuse) and keep it until release(). */
  hold(end: number, guard: MemoryGuard | null): void;
  /** Give back the scratch of one hold(). */
  release(): void;
  /** Views of the whole memory, made anew after a grow (scratch offsets are 16-aligned). */
  views(): { buffer: ArrayBuffer | SharedArrayBuffer; floats: Float32Array; ints: Int32Array };
  /** The insertion sequence of each row (ties between jobs' lists go by it). */
  seqs(): Uint32Array;
}

/** Kernel key (larger is nearer) to the score users see: cosine similarity (keys use a unit query), or Euclidean distance. */
function scoreOf(metric: Metric): (key: number) => number {
  return metric === 'cosine' ? (key) => Math.max(-1, Math.min(1, key)) : (key) => Math.sqrt(Math.max(0, -key));
}

/**
 * Write queries [q0, q1) at float `at` of `floats` as the kernel scores them:
 * cosine queries at unit length, so dot(query, row) stays in float32's normal
 * range whatever the scale of the components (1e-25-scale components would
 * underflow every product to 0).
 */
function writeQueries(floats: Float32Array, at: number, metric: Metric, queries: Float32Array, dim: number, q0: number, q1: number): void {
  if (metric !== 'cosine') {
    floats.set(queries.subarray(q0 * dim, q1 * dim), at);
    return;
  }
  for (let q = q0; q < q1; q++) {
    const scale = inverseNorm(queries.length === dim ? queries : queries.subarray(q * dim, (q + 1) * dim));
    const to = at + (q - q0) * dim;
    for (let i = 0; i < dim; i++) floats[to + i] = queries[q * dim + i] * scale;
  }
}

/** One job of an exact search: queries [q0, q1) over scanned rows [r0, r1), and where its scratch lies. */
interface Slice {
  q0: number;
  q1: number;
  r0: number;
  r1: number;
  path: SingleQueryPathName;
  scratch: ScratchLayout;
  workArea: number;
  end: number;
}

/** The exact float32 search of `request` (checked, perQuery > 0). */
export function* exactSearch(space: SearchSpace, request: CheckedRequest, executor: Executor): SearchSteps {
  const { queries, queryCount, k, rowList, perQuery, guard } = request;
  // 1. plan. A single query's faster ways need scratch per scanned row; where the budget refuses it, the one-pass scan.
  let slices = planSlices(space, request, executor, true);
  const fast = slices.some((slice) => slice.path !== 'plain');
  if (fast && !space.allows(slices[slices.length - 1].end, guard)) slices = planSlices(space, request, executor, false);
  space.hold(slices[slices.length - 1].end, guard);
  try {
    // 2. run
    const { floats, ints } = space.views();
    const { dim } = space.layout;
    const rowBytes = dim * 4;
    const jobs = slices.map(({ scratch, q0, q1, r0, r1, path, workArea }): KernelJob => {
      writeQueries(floats, scratch.queries >> 2, space.metric, queries, dim, q0, q1);
      if (rowList) ints.set(r1 - r0 === rowList.length ? rowList : rowList.subarray(r0, r1), scratch.rowList >> 2);
      // Without a row list a range is its own rows from r0: its per-row regions start there.
      const layout = rowList
        ? space.layout
        : { ...space.layout, vectors: space.layout.vectors + r0 * rowBytes, invNorms: space.layout.invNorms + r0 * 4, seqs: space.layout.seqs + r0 * 4 };
      const call = kernelCallOf({
        layout,
        scratch,
        path,
        withRowList: rowList !== null,
        count: r1 - r0,
        queries: queries.subarray(q0 * dim, q1 * dim),
        queryCount: q1 - q0,
        metricCode: space.metricCode,
        k,
      });
      return { calls: [call], workArea };
    });
    yield { jobs, small: false };
    // 3. merge
    return mergeSlices(space, slices, queryCount, k, perQuery, rowList !== null);
  } finally {
    space.release();
  }
}

/**
 * How an exact search is cut: into at least `threads` jobs and about one per
 * `sliceWork` of work (at most maxJobs): blocks of whole tile passes
 * of queries first (each keeps its pass's reuse of a row), then ranges of the
 * scanned rows; each job's scratch (and work area) laid out back to back.
 * `fast`: a one-query job may take a faster way (singleQueryPath).
 */
function planSlices(space: SearchSpace, { queryCount, k, scanned, rowList }: CheckedRequest, executor: Executor, fast: boolean): Slice[] {
  const { dim } = space.layout;
  const work = queryCount * scanned * dim;
  const parts = Math.min(executor.maxJobs, Math.max(executor.threads, Math.ceil(work / executor.sliceWork)));
  const tile = space.kernel.TILE_PASS_QUERIES.value;
  const maxRowParts = Math.max(1, Math.floor(scanned / Math.max(k, 64)));
  let queryBlocks = Math.min(parts, Math.ceil(queryCount / tile));
  const rowParts = Math.min(maxRowParts, Math.ceil(parts / queryBlocks));
  // Too few rows to cut further: smaller blocks of queries (groups of four) instead.
  if (queryBlocks * rowParts < parts) queryBlocks = Math.min(Math.ceil(queryCount / 4), Math.ceil(parts / rowParts));
  const queryStep = Math.ceil(queryCount / queryBlocks / 4) * 4;
  const rowStep = Math.ceil(scanned / rowParts);
  const workAreaBytes = executor.ownWorkAreas ? space.kernel.WORK_AREA_BYTES.value : 0;
  const slices: Slice[] = [];
  let base = space.scratchBase;
  for (let q0 = 0; q0 < queryCount; q0 += queryStep) {
    for (let r0 = 0; r0 < scanned; r0 += rowStep) {
      const q1 = Math.min(queryCount, q0 + queryStep),
        r1 = Math.min(scanned, r0 + rowStep);
      const nq = q1 - q0,
        rows = r1 - r0;
      const path: SingleQueryPathName = fast && nq === 1 ? singleQueryPath(space.paths, { metric: space.metric, dim, k, scanned: rows }) : 'plain';
      const scratch = scratchFor({ ...space.layout, scratch: base }, nq, rowList ? rows : 0, k, path === 'plain' ? 0 : rows, path === 'bounded');
      const workArea = executor.ownWorkAreas ? align16(scratch.end) : 0;
      const end = Math.max(scratch.end, workArea + workAreaBytes);
      slices.push({ q0, q1, r0, r1, path, scratch, workArea, end });
      base = align16(end);
    }
  }
  return slices;
}

/** Each query's best perQuery across its slices' best-first lists: a merge by key, then insertion sequence. */
function mergeSlices(space: SearchSpace, slices: Slice[], queryCount: number, k: number, perQuery: number, withRowList: boolean): SearchHits {
  const { floats, ints } = space.views();
  const seqs = slices.length > 1 ? space.seqs() : null;
  const score = scoreOf(space.metric);
  const rows = new Int32Array(queryCount * perQuery);
  const scores = new Float64Array(queryCount * perQuery);
  const lists: { rowsAt: number; keysAt: number; kept: number; offset: number; next: number }[] = [];
  for (let q = 0; q < queryCount; q++) {
    lists.length = 0;
    for (const { scratch, q0, q1, r0, r1 } of slices) {
      if (q < q0 || q >= q1) continue;
      const from = (q - q0) * k;
      lists.push({
        rowsAt: (scratch.outRows >> 2) + from,
        keysAt: (scratch.outKeys >> 2) + from,
        kept: Math.min(k, r1 - r0),
        offset: withRowList ? 0 : r0,
        next: 0,
      });
    }
    for (let i = 0; i < perQuery; i++) {
      let best = 0;
      // One list (a query no job shares out) is already in order.
      for (let l = 1; l < lists.length; l++) {
        const list = lists[l],
          leader = lists[best];
        if (list.next >= list.kept) continue;
        if (leader.next >= leader.kept) {
          best = l;
          continue;
        }
        const key = floats[list.keysAt + list.next],
          bestKey = floats[leader.keysAt + leader.next];
        const row = ints[list.rowsAt + list.next] + list.offset,
          bestRow = ints[leader.rowsAt + leader.next] + leader.offset;
        if (key > bestKey || (key === bestKey && seqs![row] < seqs![bestRow])) best = l;
      }
      const list = lists[best];
      rows[q * perQuery + i] = ints[list.rowsAt + list.next] + list.offset;
      scores[q * perQuery + i] = score(floats[list.keysAt + list.next]);
      list.next++;
    }
  }
  return { rows, scores, perQuery };
}

/**
 * The int8 search of `request` (checked, perQuery > 0, candidatePool set):
 * each query's first stage keeps its candidatePool best by the int8 codes
 * (cut into ranges of rows when there are fewer queries than threads: the
 * candidatePool best of the ranges' candidates, by key then sequence, are
 * the one-range stage's), then those are re-ranked exactly in float32
 * (exact scores; a true neighbour outside the candidates is missed).
 */
export function* int8Search(space: SearchSpace, request: CheckedRequest, executor: Executor): SearchSteps {
  // 1. plan
  const plan = planInt8({
    layout: space.layout,
    scratchBase: space.scratchBase,
    executor,
    queryCount: request.queryCount,
    k: request.k,
    candidates: request.candidatePool!,
    scanned: request.scanned,
    withRowList: request.rowList !== null,
    keysFirstMinPool: space.kernel.KEYS_FIRST_MIN_POOL.value,
    workAreaBytes: space.kernel.WORK_AREA_BYTES.value,
  });
  space.hold(plan.end, request.guard);
  try {
    // 2. run the first stages
    const firstJobs = firstStageJobs(space, request, plan);
    const found = yield { jobs: firstJobs, small: false };
    const kept = plan.stages.map(({ job, call }) => found[job][call]);
    // 3. merge each query's candidates, then run and merge its re-ranking
    const { jobs, work } = rerankJobs(space, request, plan, kept, firstJobs);
    yield { jobs, small: work < POOL_MIN_WORK };
    return readReranks(space, plan.reranks, request.perQuery);
  } finally {
    space.release();
  }
}

/** The first stages' jobs, with the row list and each stage's quantized query written. */
function firstStageJobs(space: SearchSpace, { queries, queryCount, rowList, candidatePool }: CheckedRequest, plan: Int8Plan): KernelJob[] {
  const { buffer, ints } = space.views();
  const { dim, codeStride } = plan.layout;
  if (rowList) ints.set(rowList, plan.rowListAt >> 2);
  const quantized = Array.from({ length: queryCount }, (_, q) => {
    const codes8 = new Int8Array(codeStride);
    return { codes8, scale: quantizeInto(queries.subarray(q * dim, (q + 1) * dim), codes8) };
  });
  const jobs: KernelJob[] = plan.jobs.map(({ workArea }) => ({ calls: [], workArea }));
  for (const { q, r0, r1, scratch, job } of plan.stages) {
    new Int16Array(buffer, scratch.query16, codeStride).set(quantized[q].codes8);
    const call = int8StageCallOf({
      layout: plan.layout,
      metric: space.metric,
      metricCode: space.metricCode,
      // Without a row list a range is its own rows from r0: its per-row regions start there.
      from: rowList ? 0 : r0,
      rowListAt: rowList ? plan.rowListAt + r0 * 4 : 0,
      count: r1 - r0,
      query16: scratch.query16,
      queryScale: quantized[q].scale,
      candidates: candidatePool!,
      outRows: scratch.outRows,
      outKeys: scratch.outKeys,
      keys: plan.jobs[job].keys,
    });
    jobs[job].calls.push(call);
  }
  return jobs;
}

/** Each query's re-ranking over its candidates (merged across ranges first when cut), in the first jobs' work areas; and their work. */
function rerankJobs(space: SearchSpace, request: CheckedRequest, plan: Int8Plan, kept: number[], firstJobs: KernelJob[]) {
  const { queries, rowList, k } = request;
  const { floats } = space.views();
  const { dim } = plan.layout;
  const jobs: KernelJob[] = firstJobs.slice(0, plan.rerankJobs).map(({ workArea }) => ({ calls: [], workArea }));
  let work = 0;
  plan.reranks.forEach(({ scratch, job }, q) => {
    const { rowListAt, count } =
      plan.rowParts > 1
        ? writeMergedCandidates(space, plan.stages, kept, q, request.candidatePool!, rowList !== null, scratch.rowList)
        : { rowListAt: plan.stages[q].scratch.outRows, count: kept[q] };
    writeQueries(floats, scratch.queries >> 2, space.metric, queries, dim, q, q + 1);
    work += count * dim;
    jobs[job].calls.push(rerankCallOf({ layout: plan.layout, metricCode: space.metricCode, rowListAt, count, scratch, k }));
  });
  return { jobs, work };
}

/**
 * Query q's candidatePool best across its ranges (by int8 key, then insertion
 * sequence), written at `listAt` as the row list its re-ranking scans.
 */
function writeMergedCandidates(space: SearchSpace, stages: Int8Stage[], kept: number[], q: number, candidates: number, withRowList: boolean, listAt: number) {
  const { floats, ints } = space.views();
  const seqs = space.seqs();
  const rows: number[] = [],
    keys: number[] = [];
  stages.forEach(({ q: of, r0, scratch }, s) => {
    if (of !== q) return;
    const offset = withRowList ? 0 : r0;
    for (let j = 0; j < kept[s]; j++) {
      rows.push(ints[(scratch.outRows >> 2) + j] + offset);
      keys.push(floats[(scratch.outKeys >> 2) + j]);
    }
  });
  const order = Array.from(rows.keys());
  order.sort((a, b) => keys[b] - keys[a] || seqs[rows[a]] - seqs[rows[b]]);
  const count = Math.min(candidates, order.length);
  for (let i = 0; i < count; i++) ints[(listAt >> 2) + i] = rows[order[i]];
  return { rowListAt: listAt, count };
}

/** Each query's re-ranked best perQuery, as scores. */
function readReranks(space: SearchSpace, reranks: { scratch: ScratchLayout }[], perQuery: number): SearchHits {
  const { floats, ints } = space.views();
  const score = scoreOf(space.metric);
  const rows = new Int32Array(reranks.length * perQuery);
  const scores = new Float64Array(reranks.length * perQuery);
  reranks.forEach(({ scratch }, q) => {
    for (let i = 0; i < perQuery; i++) {
      rows[q * perQuery + i] = ints[(scratch.outRows >> 2) + i];
      scores[q * perQuery + i] = score(floats[(scratch.outKeys >> 2) + i]);
    }
  });
  return { rows, scores, perQuery };
}
