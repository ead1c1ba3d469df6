// An upsert written in slices (the server's live writes): timers get turns
// between its slices, and once done the index is the one a single-step apply
// makes of the same batches (random ids, vectors, metadata and texts).
import { expect } from 'chai';
import type { VectorInput } from '../../src/index/types.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { Slices } from '../../src/limits/slices.js';
import { prepareMetadataAhead } from '../../src/sessions/metadata-ahead.js';
import { randomInt, randomVector, seededRng, type Rng } from '../helpers/random.js';

const DIM = 16;
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'омега', 'сигма', '東京', '大阪', 'river', 'stone'];
const newIndex = () => new VectorIndex(loadKernelModule(), 10_000);

/** `count` records over ids id0..id(ids-1) (so batches replace each other's rows), some with metadata, some with text. */
function batch(rng: Rng, count: number, ids: number): VectorInput[] {
  return Array.from({ length: count }, () => {
    const n = randomInt(rng, ids);
    const record: VectorInput = { id: `id${n}`, vector: randomVector(rng, DIM) };
    if (randomInt(rng, 4) > 0) record.metadata = { n, g: randomInt(rng, 5), tags: [WORDS[randomInt(rng, WORDS.length)]], o: { x: randomInt(rng, 3) } };
    if (randomInt(rng, 3) > 0) record.text = Array.from({ length: 1 + randomInt(rng, 40) }, () => WORDS[randomInt(rng, WORDS.length)]).join(' ');
    return record;
  });
}

/** Everything a reader sees of an index: rows in insertion order with their vectors, metadata and texts, and a few searches. */
function view(index: VectorIndex) {
  const rows = [];
  for (let page = index.list({ limit: 500, includeVectors: true, includeMetadata: true, includeText: true }); ; ) {
    rows.push(...page.vectors);
    if (!page.nextCursor) break;
    page = index.list({ limit: 500, includeVectors: true, includeMetadata: true, includeText: true, cursor: page.nextCursor });
  }
  const query = Array.from({ length: DIM }, (_, j) => (j % 3) - 1);
  const searches = [
    index.search([query], { topK: 20, includeMetadata: true }),
    index.search([query], { topK: 20, filter: { g: { $in: [1, 3] } } }),
    index.search(null, { queryTexts: ['alpha сигма 東京'], topK: 20 }),
    index.search([query], { queryTexts: ['river'], topK: 20, filter: { 'o.x': 2 } }),
  ].map((out) => out.results);
  return { size: index.size, rows, count: index.count({ tags: { $in: [['beta'], ['大阪']] } }), searches, stats: index.stats().text };
}

describe('VectorIndex upsert in slices', () => {
  it('gives timers turns between slices and leaves the index as a one-step apply does', async () => {
    const rng = seededRng(33);
    const sliced = newIndex();
    const reference = newIndex();
    const batches = [batch(rng, 600, 900), batch(rng, 1500, 900), batch(rng, 1500, 1200)];
    let ticksInside = 0;
    for (const records of batches) {
      reference.upsert(records);
      const plan = sliced.prepareUpsert(records);
      // Slices of 0 ms: a pause at every few rows, so the batch takes many turns.
      const applied = sliced.applyUpsertSliced(plan, new Slices(0));
      expect(applied).to.be.instanceOf(Promise);
      expect(sliced.applying).to.equal(applied);
      const timer = setInterval(() => {
        if (sliced.applying) ticksInside++;
      }, 0);
      const result = await applied;
      clearInterval(timer);
      expect(sliced.applying).to.equal(null);
      expect(result.added + result.replaced).to.equal(records.length);
      expect(view(sliced)).to.deep.equal(view(reference));
    }
    expect(ticksInside).to.be.greaterThan(2);
  });

  it("indexes a few long texts' terms in bounded steps too, the first slice's as the others'", async () => {
    const sliced = newIndex();
    const reference = newIndex();
    // Four records (one step of rows) with 8,000 terms each: several steps of terms, not one piece in the caller's tick.
    const records = Array.from({ length: 4 }, (_, i) => ({
      id: `id${i}`,
      vector: randomVector(seededRng(i), DIM),
      text: Array.from({ length: 8000 }, (_, j) => `t${(i * 8000 + j) % 97}`).join(' '),
    }));
    reference.upsert(records);
    const applied = sliced.applyUpsertSliced(sliced.prepareUpsert(records), new Slices(0));
    expect(applied, 'not done in the first slice').to.be.instanceOf(Promise);
    expect(await applied).to.deep.equal({ added: 4, replaced: 0 });
    expect(view(sliced)).to.deep.equal(view(reference));
  });

  it('takes metadata measured ahead as the plan would have made it', async () => {
    const index = newIndex();
    index.upsert(batch(seededRng(8), 300, 400));
    const records = batch(seededRng(9), 500, 600);
    const preparedMetadata = await prepareMetadataAhead({ index, tokenHash: '' }, records);
    const { records: _, ...ahead } = index.prepareUpsert(records, { preparedMetadata });
    const { records: __, ...made } = index.prepareUpsert(records);
    expect(ahead).to.deep.equal(made);
    expect(made.metadataBytesAdded).to.be.greaterThan(0);
  });

  it("compacts the keyword index in slices after a batch, leaving it as a one-step apply's", async () => {
    const rng = seededRng(41);
    const sliced = newIndex();
    const reference = newIndex();
    // 300 texts of 300 words each its own (90,000 postings), then replaced by short texts: the dead postings pass the live ones and the slack.
    const long = Array.from({ length: 300 }, (_, i) => ({
      id: `id${i}`,
      vector: randomVector(rng, DIM),
      text: Array.from({ length: 300 }, (_, j) => `w${i}x${j}`).join(' '),
    }));
    const short = batch(rng, 300, 300).map((record, i) => ({ ...record, id: `id${i}`, text: `${WORDS[i % WORDS.length]} w${i}x0` }));
    for (const records of [long, short]) {
      reference.upsert(records);
      const bytesBefore = sliced.stats().text.indexBytes;
      let ticksInside = 0;
      const timer = setInterval(() => {
        if (sliced.applying) ticksInside++;
      }, 0);
      await sliced.applyUpsertSliced(sliced.prepareUpsert(records), new Slices(0));
      clearInterval(timer);
      expect(ticksInside).to.be.greaterThan(2);
      // The postings rewritten without the dead ones, as the reference's in one step (view() compares their sizes too).
      if (records === short) expect(sliced.stats().text.indexBytes, 'compacted').to.be.below(bytesBefore);
      expect(view(sliced)).to.deep.equal(view(reference));
      for (const query of ['w7x0', 'w7x1 w8x0', 'alpha w1x0']) {
        expect(sliced.search(null, { queryTexts: [query], topK: 50 }).results, query).to.deep.equal(
          reference.search(null, { queryTexts: [query], topK: 50 }).results,
        );
      }
    }
  });

  it('writes a small batch in the caller tick when its slice has time', () => {
    const index = newIndex();
    const records = batch(seededRng(5), 20, 20);
    const result = index.applyUpsertSliced(index.prepareUpsert(records), new Slices(1e9));
    expect(result).not.to.be.instanceOf(Promise);
    expect(index.applying).to.equal(null);
    expect(index.size).to.equal(new Set(records.map((r) => r.id)).size);
  });
});

describe('VectorIndex delete in steps', () => {
  it('removes at most 64 rows a step and compacts the keyword index in steps, leaving the index as a one-step delete does', () => {
    const rng = seededRng(52);
    const stepped = newIndex();
    const reference = newIndex();
    // 1,600 texts of 200 words of a shared vocabulary (320,000 postings); deleting 1,200 leaves 240,000 dead against 80,000 live: a compaction of two steps.
    const records = Array.from({ length: 1600 }, (_, i) => ({
      id: `id${i}`,
      vector: randomVector(rng, DIM),
      metadata: { g: i % 5 },
      text: Array.from({ length: 200 }, (_, j) => `w${(i + j) % 500}`).join(' '),
    }));
    stepped.upsert(records);
    reference.upsert(records);
    const ids = [...Array.from({ length: 1200 }, (_, i) => `id${(i * 7) % 1600}`), 'missing', 'id0'];
    const expected = reference.delete(ids);
    const removedPerStep: number[] = [];
    let size = stepped.size;
    const steps = stepped.deleteSteps(ids);
    for (let step = steps.next(); ; step = steps.next()) {
      removedPerStep.push(size - stepped.size);
      size = stepped.size;
      if (step.done) {
        expect(step.value).to.deep.equal(expected);
        break;
      }
    }
    expect(expected.deleted).to.equal(1200);
    expect(Math.max(...removedPerStep), 'rows removed in one step').to.be.at.most(64);
    expect(removedPerStep.filter((n) => n === 0).length, 'steps of the compaction, after the rows').to.be.at.least(2);
    expect(stepped.stats().text).to.deep.equal(reference.stats().text);
    expect(view(stepped)).to.deep.equal(view(reference));
  });
});
