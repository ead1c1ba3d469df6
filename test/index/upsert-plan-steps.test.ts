// planUpsertSteps (an import's plan, made in slices) against the planner as it was before it was written in
// steps (test/helpers/upsert-plan-reference.ts): the same plan, or the same first error, on random batches
// with several problems at once; and a large batch's plan comes in several steps.
import { expect } from 'chai';
import { ANALYZERS, type Metric } from '../../src/config.js';
import type { IndexRead } from '../../src/index/index-read.js';
import type { UpsertOptions, UpsertPlan, VectorInput } from '../../src/index/types.js';
import { planUpsertSteps, prepareText } from '../../src/index/upsert-plan.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { randomMetadata, type MetadataShape, pick } from '../helpers/random-metadata.js';
import { randomInt, randomVector, seededRng, type Rng } from '../helpers/random.js';
import { planUpsertBefore } from '../helpers/upsert-plan-reference.js';

/** The index's state, as the planners read it. */
class OpenIndex extends VectorIndex {
  get read(): IndexRead {
    return this.state;
  }
}

const NOW = 1_700_000_000_000;
const METRICS: Metric[] = ['cosine', 'l2'];
const SHAPE: MetadataShape = {
  scalars: [0, 1, 2.5, -3, 'a', 'b', 'ccc', true, false, null],
  keys: ['k', 'tag', 'n', 'deep'],
  paths: ['k'],
  bounds: [0],
  maxDepth: 2,
  keyChance: 0.5,
};
const WORDS = ['alpha', 'beta', 'gamma', 'délta', 'εψιλον', 'zeta "quoted"', 'eta\\n', 'theta'];

/** What a planner did: its plan, or the error it threw (everything the caller sees of it). */
type Outcome = { plan: UpsertPlan } | { error: { name: string; message: string; code?: unknown; status?: unknown; details?: unknown } };

function outcomeOf(plan: () => UpsertPlan): Outcome {
  try {
    return { plan: plan() };
  } catch (err) {
    const { name, message, code, status, details } = err as Error & { code?: unknown; status?: unknown; details?: unknown };
    return { error: { name, message, code, status, details } };
  }
}

/** All of `steps`, counting the pauses between them. */
function stepped<T>(steps: Generator<void, T, void>): { result: T; pauses: number } {
  let pauses = 0;
  for (let step = steps.next(); ; step = steps.next(), pauses++) if (step.done) return { result: step.value, pauses };
}

/** An index holding `rows` random rows of `dim` values (none when `rows` is 0: its config still open). */
function filledIndex(rng: Rng, rows: number, dim: number, metric: Metric, maxVectors: number): OpenIndex {
  const index = new OpenIndex(loadKernelModule(), maxVectors, 64);
  index.clock = () => NOW;
  if (rows === 0) return index;
  const records = Array.from(
    { length: rows },
    (_, i): VectorInput => ({ id: `id${i}`, vector: randomVector(rng, dim), text: rng() < 0.3 ? pick(rng, WORDS) : undefined }),
  );
  index.upsert(records, { dimensions: dim, metric, analyzer: rng() < 0.5 ? pick(rng, ANALYZERS) : undefined });
  return index;
}

/** One fault put into `records[i]` (each a check of the planner: the first one it meets must win). */
function addFault(rng: Rng, record: VectorInput, dim: number): void {
  switch (randomInt(rng, 8)) {
    case 0:
      record.vector = new Array<number>(dim).fill(0); // refused under cosine only
      break;
    case 1:
      record.vector = randomVector(rng, dim + 1 + randomInt(rng, 3));
      break;
    case 2:
      record.vector = undefined;
      break;
    case 3:
      record.text = 'x'.repeat(65 + randomInt(rng, 40)); // over maxTextBytes (64)
      break;
    case 4:
      (record as { text?: unknown }).text = 42;
      break;
    case 5:
      record.ttlMs = pick(rng, [0, -5, 1.5, Number.NaN]);
      break;
    case 6:
      record.expiresAt = NOW + 10; // without a ttlMs, or more than ttlMs away
      break;
    default:
      record.ttlMs = 100;
      record.expiresAt = NOW + 100 + 1 + randomInt(rng, 50);
  }
}

/** A random batch for `index`: replaces, repeated ids, texts, ttls, metadata, vectors as arrays or Float32Arrays, and 0-3 faults. */
function randomBatch(rng: Rng, index: VectorIndex, dim: number): VectorInput[] {
  const count = pick(rng, [1, 3, 200, 1023, 1024, 1025, 2500]);
  const idPool = index.size + count;
  const records = Array.from({ length: count }, (): VectorInput => {
    const values = randomVector(rng, dim);
    const record: VectorInput = { id: `id${randomInt(rng, idPool)}`, vector: rng() < 0.3 ? Float32Array.from(values) : values };
    if (rng() < 0.4) record.metadata = randomMetadata(SHAPE, rng);
    if (rng() < 0.3) record.text = pick(rng, WORDS);
    if (rng() < 0.2) record.ttlMs = 1 + randomInt(rng, 10_000);
    if (record.ttlMs !== undefined && rng() < 0.3) record.expiresAt = NOW + randomInt(rng, record.ttlMs + 1);
    return record;
  });
  for (let f = randomInt(rng, 4); f > 0; f--) addFault(rng, records[randomInt(rng, count)], dim);
  return records;
}

/** Options as an add or an import gives them: config named or not (sometimes against the lock), metadata and texts made ahead. */
function randomOptions(rng: Rng, index: OpenIndex, records: VectorInput[], dim: number, metric: Metric): UpsertOptions {
  const options: UpsertOptions = {};
  if (rng() < 0.5) options.dimensions = rng() < 0.9 ? dim : dim + 1;
  if (rng() < 0.5) options.metric = rng() < 0.9 ? metric : pick(rng, METRICS);
  if (rng() < 0.3) options.analyzer = pick(rng, ANALYZERS);
  if (rng() < 0.3) options.writtenAt = NOW - randomInt(rng, 1000);
  if (rng() < 0.5) {
    const measured = records.map((record) => index.measureMetadata(record.metadata));
    options.preparedMetadata = { json: measured.map((m) => m.json), counts: measured.map((m) => m.count) };
  }
  const analyzer = index.getConfig().analyzer ?? options.analyzer ?? 'standard';
  if (rng() < 0.5) {
    const texts = records.map((record) => (typeof record.text === 'string' ? prepareText(record.text, analyzer) : null));
    options.preparedTexts = { analyzer, texts };
  }
  return options;
}

describe('planUpsertSteps', () => {
  it('makes the plan the planner made in one piece, or throws the same first error, on random batches', () => {
    const rng = seededRng(33);
    const seen = new Set<string>();
    for (let trial = 0; trial < 160; trial++) {
      const dim = 1 + randomInt(rng, 12);
      const metric = pick(rng, METRICS);
      const rows = pick(rng, [0, 0, 5, 300]);
      const maxVectors = rows + pick(rng, [1, 50, 1500, 5000]);
      const index = filledIndex(rng, rows, dim, metric, maxVectors);
      const records = randomBatch(rng, index, dim);
      const options = randomOptions(rng, index, records, dim, metric);
      const before = outcomeOf(() => planUpsertBefore(index.read, records, options));
      let pauses = 0;
      const after = outcomeOf(() => {
        const run = stepped(planUpsertSteps(index.read, records, options));
        pauses = run.pauses;
        return run.result;
      });
      expect(after, `trial ${trial}`).to.deep.equal(before);
      expect(
        outcomeOf(() => index.prepareUpsert(records, options)),
        `trial ${trial}: in one piece`,
      ).to.deep.equal(before);
      if ('plan' in after && records.length > 1024) expect(pauses, `trial ${trial}: pauses`).to.be.at.least(4);
      seen.add('plan' in before ? 'plan' : String(before.error.code ?? before.error.name));
    }
    // The random batches reach the plans and each kind of refusal (so the comparison above meant something).
    expect([...seen].sort()).to.include.members(['plan', 'VALIDATION_ERROR', 'DIMENSION_MISMATCH', 'ZERO_VECTOR', 'CAPACITY_EXCEEDED']);
  });

  it('plans a large batch in many steps of at most 1,024 records each, the same plan as in one piece', () => {
    const rng = seededRng(5);
    const index = filledIndex(rng, 10, 8, 'cosine', 10_000);
    const records = Array.from(
      { length: 5000 },
      (_, i): VectorInput => ({ id: `n${i}`, vector: randomVector(rng, 8), metadata: { i }, text: 'some words', ttlMs: 1000 }),
    );
    const { result, pauses } = stepped(planUpsertSteps(index.read, records, {}));
    // Four passes over the records (vectors, texts, ids and metadata, ttls), a pause every 1,024 records of each.
    expect(pauses).to.equal(4 * Math.floor((5000 - 1) / 1024));
    expect(result).to.deep.equal(planUpsertBefore(index.read, records, {}));
  });
});
