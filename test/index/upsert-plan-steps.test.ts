// planUpsertSteps (an import's plan, made in slices): a large batch's plan comes in steps of at most
// 1,024 records of each pass, and is the plan made in one piece. (When it was written, it was checked
// against the planner as it was before, on 160 random batches with up to three problems each: the same
// plan or the same first error; commit c405d83.)
import { expect } from 'chai';
import type { IndexRead } from '../../src/index/index-read.js';
import type { VectorInput } from '../../src/index/types.js';
import { planUpsertSteps } from '../../src/index/upsert-plan.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { randomVector, seededRng } from '../helpers/random.js';

/** The index's state, as the planners read it. */
class OpenIndex extends VectorIndex {
  get read(): IndexRead {
    return this.state;
  }
}

function stepped<T>(steps: Generator<void, T, void>): { result: T; pauses: number } {
  let pauses = 0;
  for (let step = steps.next(); ; step = steps.next(), pauses++) if (step.done) return { result: step.value, pauses };
}

describe('planUpsertSteps', () => {
  it('plans a large batch in many steps of at most 1,024 records each, the same plan as in one piece', () => {
    const rng = seededRng(5);
    const index = new OpenIndex(loadKernelModule(), 10_000, 64);
    index.clock = () => 1_700_000_000_000;
    index.upsert(Array.from({ length: 10 }, (_, i): VectorInput => ({ id: `id${i}`, vector: randomVector(rng, 8) })));
    const records = Array.from(
      { length: 5000 },
      (_, i): VectorInput => ({ id: i % 7 === 0 ? `id${i % 10}` : `n${i}`, vector: randomVector(rng, 8), metadata: { i }, text: 'some words', ttlMs: 1000 }),
    );
    const { result, pauses } = stepped(planUpsertSteps(index.read, records, {}));
    // Four passes over the records (vectors, texts, ids and metadata, ttls), a pause every 1,024 records of each.
    expect(pauses).to.equal(4 * Math.floor((5000 - 1) / 1024));
    expect(result).to.deep.equal(index.prepareUpsert(records, {}));
  });
});
