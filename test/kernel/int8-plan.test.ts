// The plan of an int8 search (src/kernel/int8-plan.ts), checked from its
// numbers alone on random shapes: every query's ranges cover its rows once,
// jobs and calls are numbered as the driver sends results back, and no two
// scratch regions overlap or leave [scratchBase, end).
import { expect } from 'chai';
import { planInt8, type Int8PlanInput } from '../../src/kernel/int8-plan.js';
import { layoutFor, scratchFor, int8ScratchFor, codeStrideFor } from '../../src/kernel/layout.js';
import { int8RowParts } from '../../src/kernel/search-path.js';
import { randomInt, seededRng, type Rng } from '../helpers/random.js';

const KEYS_FIRST_MIN_POOL = 256;
const WORK_AREA_BYTES = 4096;

function randomInput(rng: Rng): Int8PlanInput {
  const dim = 1 + randomInt(rng, 200);
  const capacity = 1 + randomInt(rng, 5000);
  const layout = layoutFor(64, dim, capacity, codeStrideFor(dim, true));
  const threads = 1 + randomInt(rng, 4);
  const k = 1 + randomInt(rng, 20);
  return {
    layout,
    scratchBase: layout.scratch + 16 * randomInt(rng, 100),
    executor:
      threads === 1
        ? { threads: 1, sliceWork: Number.POSITIVE_INFINITY, maxJobs: 1, ownWorkAreas: false }
        : { threads, sliceWork: 1000 + randomInt(rng, 1_000_000), maxJobs: 1 + randomInt(rng, 64), ownWorkAreas: true },
    queryCount: 1 + randomInt(rng, 12),
    k,
    candidates: k + randomInt(rng, 400),
    scanned: 1 + randomInt(rng, capacity),
    withRowList: rng() < 0.5,
    keysFirstMinPool: KEYS_FIRST_MIN_POOL,
    workAreaBytes: WORK_AREA_BYTES,
  };
}

/** Every region the plan lays out, as [start, end) with a name. */
function regionsOf(input: Int8PlanInput, plan: ReturnType<typeof planInt8>): { name: string; start: number; end: number }[] {
  const regions = [{ name: 'row list', start: plan.rowListAt, end: plan.rowListAt + (input.withRowList ? input.scanned * 4 : 0) }];
  plan.stages.forEach(({ scratch }, s) => {
    regions.push({ name: `stage ${s}`, start: scratch.query16, end: scratch.end });
  });
  plan.jobs.forEach(({ keys, workArea }, j) => {
    if (keys) regions.push({ name: `job ${j} keys`, start: keys, end: keys + Math.ceil(Math.ceil(input.scanned / plan.rowParts) / 4) * 16 });
    if (workArea) regions.push({ name: `job ${j} work area`, start: workArea, end: workArea + WORK_AREA_BYTES });
  });
  plan.reranks.forEach(({ scratch }, q) => {
    regions.push({ name: `rerank ${q}`, start: scratch.queries, end: scratch.end });
  });
  return regions;
}

describe('int8 search plan (planInt8)', () => {
  it('cuts each query into ranges covering its rows once, in order', () => {
    const rng = seededRng(34);
    for (let trial = 0; trial < 500; trial++) {
      const input = randomInput(rng);
      const plan = planInt8(input);
      const { threads, sliceWork } = input.executor;
      const wantedParts = threads > 1 ? int8RowParts(threads, input.queryCount, input.scanned, input.layout.dim, sliceWork) : 1;
      expect(plan.rowParts, `trial ${trial}`).to.equal(wantedParts);
      for (let q = 0; q < input.queryCount; q++) {
        const ranges = plan.stages.filter((stage) => stage.q === q);
        expect(ranges.length).to.be.within(1, plan.rowParts);
        let next = 0;
        for (const { r0, r1 } of ranges) {
          expect(r0, `trial ${trial} query ${q}`).to.equal(next);
          expect(r1).to.be.greaterThan(r0);
          next = r1;
        }
        expect(next).to.equal(input.scanned);
      }
      // Query by query: the first stage of a query without ranges is stages[q] (the re-ranking reads it so).
      if (plan.rowParts === 1) expect(plan.stages.map((stage) => stage.q)).to.deep.equal(Array.from({ length: input.queryCount }, (_, q) => q));
    }
  });

  it('numbers jobs and calls as the driver answers them, within maxJobs, and places re-rankings in the first jobs', () => {
    const rng = seededRng(35);
    for (let trial = 0; trial < 500; trial++) {
      const input = randomInput(rng);
      const plan = planInt8(input);
      expect(plan.jobs.length).to.be.within(1, input.executor.maxJobs);
      const calls = plan.jobs.map(() => 0);
      for (const { job, call } of plan.stages) {
        // Stages in order fill job after job: call i of a job is its i-th stage.
        expect(job).to.be.within(0, plan.jobs.length - 1);
        expect(call, `trial ${trial}`).to.equal(calls[job]);
        calls[job]++;
        for (let j = job + 1; j < plan.jobs.length; j++) expect(calls[j]).to.equal(0);
      }
      expect(calls.every((n) => n > 0)).to.equal(true);
      expect(plan.rerankJobs).to.equal(Math.min(plan.jobs.length, input.queryCount));
      expect(plan.reranks).to.have.length(input.queryCount);
      let last = 0;
      for (const { job } of plan.reranks) {
        expect(job).to.be.within(last, plan.rerankJobs - 1);
        last = job;
      }
      expect(new Set(plan.reranks.map(({ job }) => job)).size).to.equal(plan.rerankJobs);
    }
  });

  it('lays out non-overlapping 16-aligned scratch within [scratchBase, end), sized for each part', () => {
    const rng = seededRng(36);
    for (let trial = 0; trial < 500; trial++) {
      const input = randomInput(rng);
      const plan = planInt8(input);
      const regions = regionsOf(input, plan).sort((a, b) => a.start - b.start || a.end - b.end);
      for (const region of regions) {
        expect(region.start % 16, region.name).to.equal(0);
        expect(region.start, region.name).to.be.at.least(input.scratchBase);
        expect(region.end, region.name).to.be.at.most(plan.end);
      }
      for (let i = 1; i < regions.length; i++) {
        expect(regions[i].start, `trial ${trial}: ${regions[i].name} after ${regions[i - 1].name}`).to.be.at.least(regions[i - 1].end);
      }
      const at = (base: number) => ({ ...input.layout, scratch: base });
      for (const { scratch } of plan.stages) expect(scratch).to.deep.equal(int8ScratchFor(at(scratch.query16), 0, input.candidates));
      for (const { scratch } of plan.reranks) {
        expect(scratch).to.deep.equal(scratchFor(at(scratch.queries), 1, plan.rowParts > 1 ? input.candidates : 0, input.k));
      }
      const keysFirst = input.candidates >= KEYS_FIRST_MIN_POOL;
      for (const { keys, workArea } of plan.jobs) {
        expect(keys > 0, 'keys for a large pool only').to.equal(keysFirst);
        expect(workArea > 0, 'work areas on a pool only').to.equal(input.executor.ownWorkAreas);
      }
    }
  });
});
