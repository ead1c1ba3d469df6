// The search stages (decay, groupBy, mmr) of VectorIndex against a plain
// float64 reference on random data with ties (duplicate vectors, repeated
// values): ids must equal the reference's except where two reference scores
// differ by less than TIE_TOLERANCE, and every score must be within
// SCORE_TOLERANCE of its reference.
import { expect } from 'chai';
import type { Metric } from '../../../src/config.js';
import { curveOf } from '../../../src/index/search/decay.js';
import type { DecayCurve, SearchHit } from '../../../src/index/types.js';
import { VectorIndex } from '../../../src/index/vector-index.js';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { randomInt, randomVector, seededRng, type Rng } from '../../helpers/random.js';
import { referenceScore, SCORE_TOLERANCE, TIE_TOLERANCE } from '../../helpers/reference.js';

const close = (a: number, b: number, tol: number) => Math.abs(a - b) <= tol * Math.max(1, Math.abs(b));

interface Row {
  id: string;
  seq: number;
  vector: number[];
  metadata: Record<string, unknown>;
}

/** Rows with duplicate vectors (every seventh repeats an earlier one) and metadata: a number t, a date d, a group g (a number, an array, missing or an object). */
function filled(metric: Metric, seed: number, count = 400, dim = 8) {
  const rng = seededRng(seed);
  const index = new VectorIndex(loadKernelModule(), 10_000);
  const day = 86_400_000;
  const rows: Row[] = Array.from({ length: count }, (_, i) => {
    const metadata: Record<string, unknown> = { k: i % 3 };
    if (i % 11 !== 0) metadata.t = randomInt(rng, 50);
    if (i % 13 !== 0) metadata.d = new Date(Date.UTC(2025, 0, 1) + randomInt(rng, 60) * day).toISOString();
    const kind = i % 10;
    if (kind < 6) metadata.g = randomInt(rng, 12);
    else if (kind < 8) metadata.g = [`s${randomInt(rng, 5)}`, randomInt(rng, 12)];
    else if (kind === 8) metadata.g = { nested: 1 };
    return { id: `v${i}`, seq: i, vector: randomVector(rng, dim), metadata };
  });
  for (let i = 7; i < count; i += 7) rows[i].vector = rows[randomInt(rng, i)].vector;
  index.upsert(rows, { metric });
  return { index, rows, rng, dim };
}

/** Larger is better: cosine similarity, or minus the l2 distance. */
const similarityOf = (metric: Metric, a: ArrayLike<number>, b: ArrayLike<number>) => (metric === 'cosine' ? 1 : -1) * referenceScore(metric, a, b);

/** The reference order: goodness desc, then insertion order. */
const byGoodness = <T extends { good: number; seq: number }>(a: T, b: T) => (a.good === b.good ? a.seq - b.seq : b.good - a.good);

/** `actual` is the best-first top of `expected` (sorted), ids equal but for near-ties, scores as `shown`. */
function expectRanked(
  label: string,
  actual: readonly SearchHit[],
  expected: readonly { id: string; good: number; seq: number }[],
  k: number,
  shown: (good: number) => number,
) {
  const top = expected.slice(0, k);
  const goodOf = new Map(expected.map((r) => [r.id, r.good]));
  expect(actual.length, `${label}: count`).to.equal(top.length);
  expect(new Set(actual.map((h) => h.id)).size, `${label}: distinct`).to.equal(actual.length);
  actual.forEach((hit, rank) => {
    const good = goodOf.get(hit.id);
    expect(good, `${label}: ${hit.id} is not a kept row`).to.not.equal(undefined);
    expect(close(hit.score, shown(good!), SCORE_TOLERANCE), `${label} rank ${rank}: score ${hit.score}, reference ${shown(good!)}`).to.equal(true);
    if (hit.id !== top[rank].id)
      expect(close(good!, top[rank].good, TIE_TOLERANCE), `${label} rank ${rank}: ${hit.id} (${good}) for ${top[rank].id} (${top[rank].good})`).to.equal(true);
  });
}

/** Reference decay of a row (0 without a value; the nearest of several). */
function referenceDecay(
  metadata: Record<string, unknown>,
  path: string,
  origin: number,
  dates: boolean,
  curve: DecayCurve,
  midpoint: number,
  scale: number,
): number {
  const raw = metadata[path];
  let best = 0;
  for (const value of Array.isArray(raw) ? raw : [raw]) {
    const x = dates ? (typeof value === 'string' ? Date.parse(value) : Number.NaN) : typeof value === 'number' ? value : Number.NaN;
    if (Number.isNaN(x)) continue;
    const d = Math.abs(x - origin);
    const decay =
      curve === 'linear' ? Math.max(0, 1 - ((1 - midpoint) * d) / scale) : curve === 'gauss' ? midpoint ** ((d / scale) ** 2) : midpoint ** (d / scale);
    best = Math.max(best, decay);
  }
  return best;
}

const randomFilter = (rng: Rng) => (rng() < 0.5 ? undefined : { k: { $in: [0, 2] } });
const passes = (filter: unknown, row: Row) => filter === undefined || row.metadata.k !== 1;

describe('search stages: decay', () => {
  it('each curve is 1 at the origin and midpoint at the scale; linear reaches 0 at scale / (1 - midpoint)', () => {
    for (const curve of ['exp', 'gauss', 'linear'] as const) {
      for (const midpoint of [0.1, 0.5, 0.9]) {
        const decay = curveOf(curve, midpoint, 7);
        expect(decay(0), curve).to.equal(1);
        expect(close(decay(7), midpoint, 1e-12), `${curve} at scale`).to.equal(true);
        expect(decay(100) < midpoint, `${curve} past scale`).to.equal(true);
      }
    }
    const linear = curveOf('linear', 0.5, 7);
    expect(linear(14)).to.equal(0);
    expect(linear(20)).to.equal(0);
    expect(linear(13.9) > 0).to.equal(true);
  });

  it('a row at the origin scores weight + (1 - weight) x similarity, at the scale the midpoint (weight 1)', () => {
    const index = new VectorIndex(loadKernelModule(), 100);
    index.upsert([
      { id: 'at', vector: [1, 0], metadata: { x: 10 } },
      { id: 'scale', vector: [1, 0], metadata: { x: 13 } },
      { id: 'zero', vector: [1, 0], metadata: { x: 16 } },
      { id: 'none', vector: [1, 0] },
    ]);
    for (const curve of ['exp', 'gauss', 'linear'] as const) {
      const out = index.search([[1, 0]], { topK: 4, decay: { path: 'x', origin: 10, scale: 3, midpoint: 0.5, curve, weight: 1 } }).results[0];
      const score = Object.fromEntries(out.map((h) => [h.id, h.score]));
      expect(score.at, curve).to.equal(1);
      expect(close(score.scale, 0.5, 1e-12), curve).to.equal(true);
      expect(score.none, curve).to.equal(0);
      if (curve === 'linear') expect(score.zero).to.equal(0);
    }
  });

  for (const metric of ['cosine', 'l2'] as const) {
    for (const curve of ['exp', 'gauss', 'linear'] as const) {
      it(`numbers: the exact top k of the final score over every filtered row (${metric}, ${curve})`, () => {
        const { index, rows, rng, dim } = filled(metric, curve.length + (metric === 'l2' ? 10 : 0));
        for (let q = 0; q < 12; q++) {
          const query = randomVector(rng, dim);
          const filter = randomFilter(rng);
          const decay = { path: 't', origin: randomInt(rng, 50), scale: 1 + randomInt(rng, 20), midpoint: 0.2 + 0.6 * rng(), curve, weight: rng() };
          const out = index.search([query], { topK: 10, filter, decay }).results[0];
          const expected = rows
            .filter((r) => passes(filter, r))
            .map((r) => ({
              id: r.id,
              seq: r.seq,
              good:
                (1 - decay.weight) * similarityOf(metric, query, r.vector) +
                decay.weight * referenceDecay(r.metadata, 't', decay.origin, false, curve, decay.midpoint, decay.scale),
            }))
            .sort(byGoodness);
          expectRanked(`query ${q}`, out, expected, 10, (g) => g);
        }
      });
    }
  }

  it('dates: an ISO-8601 origin and "now", scale in milliseconds, arrays taking the nearest value', () => {
    const { index, rows, rng, dim } = filled('cosine', 77);
    const day = 86_400_000;
    for (let q = 0; q < 8; q++) {
      const query = randomVector(rng, dim);
      const origin = new Date(Date.UTC(2025, 0, 1) + randomInt(rng, 60) * day).toISOString();
      const decay = { path: 'd', origin, scale: 5 * day, curve: 'gauss' as const, weight: 0.7 };
      const out = index.search([query], { topK: 10, decay }).results[0];
      const expected = rows
        .map((r) => ({
          id: r.id,
          seq: r.seq,
          good: 0.3 * similarityOf('cosine', query, r.vector) + 0.7 * referenceDecay(r.metadata, 'd', Date.parse(origin), true, 'gauss', 0.5, 5 * day),
        }))
        .sort(byGoodness);
      expectRanked(`date query ${q}`, out, expected, 10, (g) => g);
    }
    // "now": values spread around the present; the reference's now is taken just before the search.
    const near = new VectorIndex(loadKernelModule(), 1000);
    const now = Date.now();
    const recent = Array.from({ length: 200 }, (_, i) => ({
      id: `r${i}`,
      seq: i,
      vector: randomVector(rng, 4),
      metadata: { at: i % 5 === 0 ? [new Date(now - i * 3_600_000).toISOString(), 'x'] : new Date(now - i * 3_600_000).toISOString() } as Record<
        string,
        unknown
      >,
    }));
    near.upsert(recent);
    const query = randomVector(rng, 4);
    const before = Date.now();
    const out = near.search([query], { topK: 10, decay: { path: 'at', origin: 'now', scale: 24 * 3_600_000, curve: 'exp', weight: 0.5 } }).results[0];
    const expected = recent
      .map((r) => ({
        id: r.id,
        seq: r.seq,
        good: 0.5 * similarityOf('cosine', query, r.vector) + 0.5 * referenceDecay(r.metadata, 'at', before, true, 'exp', 0.5, 24 * 3_600_000),
      }))
      .sort(byGoodness);
    // The clock moves between the reference and the search: a few ms of 24 h.
    expectRanked('now', out, expected, 10, (g) => g);
  });

  it('weight 0 is the plain search (cosine: the same ids and scores; l2: minus the distances)', () => {
    for (const metric of ['cosine', 'l2'] as const) {
      const { index, rng, dim } = filled(metric, 5);
      for (let q = 0; q < 5; q++) {
        const query = randomVector(rng, dim);
        const plain = index.search([query], { topK: 10 }).results[0];
        const decayed = index.search([query], { topK: 10, decay: { path: 't', origin: 0, scale: 1, weight: 0 } }).results[0];
        expect(decayed.map((h) => h.id)).to.deep.equal(plain.map((h) => h.id));
        expect(decayed.map((h) => h.score)).to.deep.equal(plain.map((h) => (metric === 'cosine' ? h.score : -h.score)));
      }
    }
  });

  it('hybrid: the fused score decayed, and every other filtered row with a decay at weight x decay', () => {
    const rng = seededRng(91);
    const index = new VectorIndex(loadKernelModule(), 1000);
    const words = ['red', 'green', 'blue', 'apple', 'pear', 'stone', 'river', 'cloud'];
    const rows = Array.from({ length: 300 }, (_, i) => ({
      id: `v${i}`,
      vector: randomVector(rng, 6),
      text: Array.from({ length: 4 }, () => words[randomInt(rng, words.length)]).join(' '),
      metadata: { k: i % 3, ...(i % 4 === 0 ? {} : { t: randomInt(rng, 60) }) } as Record<string, unknown>,
    }));
    index.upsert(rows);
    const seq = new Map(rows.map((r, i) => [r.id, i]));
    let unranked = 0;
    for (let q = 0; q < 8; q++) {
      const query = randomVector(rng, 6);
      const text = `${words[randomInt(rng, words.length)]} ${words[randomInt(rng, words.length)]}`;
      const filter = q % 2 ? { k: { $ne: 1 } } : undefined;
      const decay = { path: 't', origin: randomInt(rng, 60), scale: 5, weight: 0.2 + 0.6 * rng() };
      // The fused score (rrf, k 60) of every row either arm ranks among its 20 best.
      const vectorArm = index.search([query], { topK: 20, filter }).results[0];
      const textArm = index.search(null, { queryTexts: [text], topK: 20, filter }).results[0];
      const fusedOf = new Map<string, number>();
      for (const arm of [vectorArm, textArm]) {
        arm.forEach((h, rank) => {
          fusedOf.set(h.id, (fusedOf.get(h.id) ?? 0) + 1 / (60 + rank + 1));
        });
      }
      const expected = rows
        .filter((r) => filter === undefined || r.metadata.k !== 1)
        .map((r) => {
          const d = referenceDecay(r.metadata, 't', decay.origin, false, 'exp', 0.5, 5);
          const f = fusedOf.get(r.id);
          return { id: r.id, seq: seq.get(r.id)!, good: f === undefined ? (d > 0 ? decay.weight * d : Number.NaN) : (1 - decay.weight) * f + decay.weight * d };
        })
        .filter((r) => !Number.isNaN(r.good))
        .sort(byGoodness);
      const out = index.search([query], { queryTexts: [text], topK: 15, candidatePool: 20, filter, decay }).results[0];
      expectRanked(`hybrid ${q}`, out, expected, 15, (g) => g);
      for (const hit of out) if (!fusedOf.has(hit.id)) expect([hit.vectorRank, hit.textRank], hit.id).to.deep.equal([null, null]);
      unranked += out.filter((hit) => !fusedOf.has(hit.id)).length;
    }
    expect(unranked, 'rows neither arm ranked, brought in by their decay').to.be.greaterThan(0);
  });

  it('past one step of rows (65,536 a step): the same as the plain search, filtered or not', () => {
    const rng = seededRng(95);
    const index = new VectorIndex(loadKernelModule(), 100_000);
    const n = 70_000;
    const records = Array.from({ length: n }, (_, i) => ({ id: `v${i}`, vector: randomVector(rng, 4), metadata: { k: i % 3 } }));
    for (let i = 0; i < n; i += 10_000) index.upsert(records.slice(i, i + 10_000));
    for (const filter of [undefined, { k: { $ne: 1 } }]) {
      const query = randomVector(rng, 4);
      const plain = index.search([query], { topK: 20, filter }).results[0];
      const decayed = index.search([query], { topK: 20, filter, decay: { path: 'none', origin: 0, scale: 1, weight: 0 } }).results[0];
      expect(decayed).to.deep.equal(plain);
      // The last rows (past the first step) are scored: the query's own vector, stored last, is found first.
      const last = records[n - 1];
      if (filter === undefined || last.metadata.k !== 1) {
        expect(index.search([last.vector], { topK: 1, filter, decay: { path: 'none', origin: 0, scale: 1, weight: 0 } }).results[0][0].id).to.equal(last.id);
      }
    }
  });

  it('by ids, the query left out; scoreThreshold on the final score', () => {
    const { index, rows, rng } = filled('cosine', 9);
    for (let q = 0; q < 5; q++) {
      const own = rows[randomInt(rng, rows.length)];
      const decay = { path: 't', origin: 25, scale: 10, weight: 0.4 };
      const all = rows
        .filter((r) => r.id !== own.id)
        .map((r) => ({
          id: r.id,
          seq: r.seq,
          good: 0.6 * similarityOf('cosine', own.vector, r.vector) + 0.4 * referenceDecay(r.metadata, 't', 25, false, 'exp', 0.5, 10),
        }))
        .sort(byGoodness);
      const out = index.searchByIds([own.id], { topK: 10, decay }).results[0];
      expectRanked(`own ${own.id}`, out, all, 10, (g) => g);
      const threshold = (all[4].good + all[5].good) / 2;
      const cut = index.searchByIds([own.id], { topK: 10, decay, scoreThreshold: threshold }).results[0];
      expectRanked(
        `threshold ${own.id}`,
        cut,
        all.filter((r) => r.good >= threshold),
        10,
        (g) => g,
      );
    }
  });
});

describe('search stages: groupBy', () => {
  /** The reference groups: each scalar (array elements each count, objects none) with its kept rows best first. */
  function referenceGroups(rows: Row[], kept: (r: Row) => boolean, good: (r: Row) => number, path: string) {
    const groups = new Map<string, { value: unknown; members: { id: string; seq: number; good: number }[] }>();
    for (const r of rows) {
      if (!kept(r)) continue;
      const raw = r.metadata[path];
      const values = new Set((Array.isArray(raw) ? raw : [raw]).filter((x) => x === null || typeof x !== 'object'));
      for (const value of values) {
        if (value === undefined) continue;
        const key = JSON.stringify(value);
        if (!groups.has(key)) groups.set(key, { value, members: [] });
        groups.get(key)!.members.push({ id: r.id, seq: r.seq, good: good(r) });
      }
    }
    for (const g of groups.values()) g.members.sort(byGoodness);
    return [...groups.values()].sort((a, b) => byGoodness(a.members[0], b.members[0]));
  }

  function expectGroups(
    label: string,
    actual: { value: unknown; hits: SearchHit[] }[],
    expected: ReturnType<typeof referenceGroups>,
    topK: number,
    size: number,
    shown: (g: number) => number,
  ) {
    expect(actual.length, `${label}: groups`).to.equal(Math.min(topK, expected.length));
    expect(new Set(actual.map((g) => JSON.stringify(g.value))).size, `${label}: distinct values`).to.equal(actual.length);
    const byValue = new Map(expected.map((g) => [JSON.stringify(g.value), g]));
    actual.forEach((group, rank) => {
      const ref = byValue.get(JSON.stringify(group.value));
      expect(ref, `${label}: group ${JSON.stringify(group.value)} is not a value`).to.not.equal(undefined);
      expectRanked(`${label} group ${JSON.stringify(group.value)}`, group.hits, ref!.members, size, shown);
      // Groups by their best hit: the rank's reference best, but for near-ties.
      const best = ref!.members[0].good;
      expect(
        close(best, expected[rank].members[0].good, TIE_TOLERANCE),
        `${label} group rank ${rank}: best ${best} for ${expected[rank].members[0].good}`,
      ).to.equal(true);
    });
  }

  for (const metric of ['cosine', 'l2'] as const) {
    it(`the topK groups by their best hit, each with its best size (arrays, missing paths, objects left out; ${metric})`, () => {
      const { index, rows, rng, dim } = filled(metric, metric === 'l2' ? 21 : 22);
      for (let q = 0; q < 12; q++) {
        const query = randomVector(rng, dim);
        const filter = randomFilter(rng);
        const topK = 1 + randomInt(rng, 20);
        const size = 1 + randomInt(rng, 5);
        const out = index.search([query], { topK, filter, groupBy: { path: 'g', size } });
        expect(out.results[0]).to.deep.equal([]);
        const expected = referenceGroups(
          rows,
          (r) => passes(filter, r),
          (r) => similarityOf(metric, query, r.vector),
          'g',
        );
        expectGroups(`query ${q}`, out.groups![0], expected, topK, size, (g) => (metric === 'cosine' ? g : -g));
      }
    });
  }

  it('search-many and by ids (each query its own groups, its own vector left out), with decay', () => {
    const { index, rows, rng, dim } = filled('cosine', 31);
    const queries = Array.from({ length: 5 }, () => randomVector(rng, dim));
    const decay = { path: 't', origin: 10, scale: 5, weight: 0.3 };
    const goodFor = (query: number[]) => (r: Row) =>
      0.7 * similarityOf('cosine', query, r.vector) + 0.3 * referenceDecay(r.metadata, 't', 10, false, 'exp', 0.5, 5);
    const many = index.search(queries, { topK: 6, groupBy: { path: 'g', size: 2 }, decay });
    queries.forEach((query, j) => {
      expectGroups(
        `query ${j}`,
        many.groups![j],
        referenceGroups(rows, () => true, goodFor(query), 'g'),
        6,
        2,
        (g) => g,
      );
    });
    const ids = [rows[3], rows[50], rows[99]];
    const byIds = index.searchByIds(
      ids.map((r) => r.id),
      { topK: 6, groupBy: { path: 'g', size: 2 } },
    );
    ids.forEach((own, j) => {
      const expected = referenceGroups(
        rows,
        (r) => r.id !== own.id,
        (r) => similarityOf('cosine', own.vector, r.vector),
        'g',
      );
      expectGroups(`id ${own.id}`, byIds.groups![j], expected, 6, 2, (g) => g);
    });
  });

  it('strings too long to be index keys group by their whole value', () => {
    const rng = seededRng(41);
    const index = new VectorIndex(loadKernelModule(), 1000);
    const long = (n: number) => `${n}:` + 'x'.repeat(300);
    const rows: Row[] = Array.from({ length: 120 }, (_, i) => ({
      id: `v${i}`,
      seq: i,
      vector: randomVector(rng, 6),
      metadata: { g: i % 3 === 0 ? long(i % 4) : i % 3 === 1 ? [long(i % 5), 'short'] : `s${i % 2}` },
    }));
    index.upsert(rows);
    const query = randomVector(rng, 6);
    const out = index.search([query], { topK: 20, groupBy: { path: 'g', size: 3 } });
    expectGroups(
      'long',
      out.groups![0],
      referenceGroups(
        rows,
        () => true,
        (r) => similarityOf('cosine', query, r.vector),
        'g',
      ),
      20,
      3,
      (g) => g,
    );
  });
});

describe('search stages: mmr', () => {
  for (const metric of ['cosine', 'l2'] as const) {
    it(`diversity 0 is the plain search, in order, each hit with its mmrRank (${metric})`, () => {
      const { index, rng, dim } = filled(metric, 51);
      for (let q = 0; q < 10; q++) {
        const query = randomVector(rng, dim);
        const filter = randomFilter(rng);
        const plain = index.search([query], { topK: 10, filter }).results[0];
        const mmr = index.search([query], { topK: 10, filter, mmr: { diversity: 0, candidates: 50 } }).results[0];
        expect(mmr).to.deep.equal(plain.map((hit, rank) => ({ ...hit, mmrRank: rank + 1 })));
      }
    });

    it(`each pick maximises the marginal relevance over the exact top candidates (${metric})`, () => {
      const { index, rows, rng, dim } = filled(metric, metric === 'l2' ? 61 : 62);
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (let q = 0; q < 10; q++) {
        const query = randomVector(rng, dim);
        const diversity = rng();
        const candidates = 10 + randomInt(rng, 100);
        const out = index.search([query], { topK: 10, mmr: { diversity, candidates } }).results[0];
        const pool = rows.map((r) => ({ id: r.id, seq: r.seq, good: similarityOf(metric, query, r.vector) })).sort(byGoodness);
        // The candidates: the reference's top `candidates`, but for near-ties at the edge.
        const edge = pool[candidates - 1].good;
        const inPool = (id: string) => {
          const good = similarityOf(metric, query, byId.get(id)!.vector);
          return good > edge || close(good, edge, TIE_TOLERANCE);
        };
        expect(out.length).to.equal(10);
        out.forEach((hit, rank) => {
          expect(hit.mmrRank).to.equal(rank + 1);
          expect(inPool(hit.id), `${hit.id} is a candidate`).to.equal(true);
          expect(
            close(
              hit.score,
              metric === 'cosine' ? similarityOf(metric, query, byId.get(hit.id)!.vector) : -similarityOf(metric, query, byId.get(hit.id)!.vector),
              SCORE_TOLERANCE,
            ),
          ).to.equal(true);
        });
        // Given the picks before it, each pick's marginal relevance is the best of the remaining candidates' (to an error bound).
        const picked: Row[] = [];
        const marginal = (r: Row) =>
          (1 - diversity) * similarityOf(metric, query, r.vector) - diversity * Math.max(...picked.map((p) => similarityOf(metric, p.vector, r.vector)));
        expect(close(similarityOf(metric, query, byId.get(out[0].id)!.vector), pool[0].good, TIE_TOLERANCE), 'first pick: the best match').to.equal(true);
        picked.push(byId.get(out[0].id)!);
        for (let p = 1; p < out.length; p++) {
          const rest = pool.slice(0, candidates).filter((c) => !picked.some((x) => x.id === c.id));
          const best = Math.max(...rest.map((c) => marginal(byId.get(c.id)!)));
          const got = marginal(byId.get(out[p].id)!);
          expect(got >= best - 1e-5 * Math.max(1, Math.abs(best)), `pick ${p}: ${got} < best ${best}`).to.equal(true);
          picked.push(byId.get(out[p].id)!);
        }
      }
    });
  }

  it('int8 sessions: every stage exact in float32; scoreThreshold cuts the candidates first', () => {
    const { index: f32 } = filled('cosine', 81);
    const rng = seededRng(81);
    const int8 = new VectorIndex(loadKernelModule(), 10_000);
    const rows = Array.from({ length: 400 }, (_, i) => ({ id: `v${i}`, vector: randomVector(rng, 8), metadata: { g: i % 7, t: i % 50 } }));
    int8.upsert(rows, { vectorType: 'int8' });
    f32.clear();
    f32.upsert(rows);
    for (let q = 0; q < 5; q++) {
      const query = randomVector(rng, 8);
      for (const options of [
        { topK: 8, mmr: { diversity: 0.4, candidates: 60 } },
        { topK: 5, groupBy: { path: 'g', size: 2 } },
        { topK: 8, decay: { path: 't', origin: 10, scale: 4 } },
      ]) {
        const a = int8.search([query], options);
        const b = f32.search([query], options);
        expect(a.stats.exact).to.equal(true);
        expect(a.results).to.deep.equal(b.results);
        expect(a.groups).to.deep.equal(b.groups);
      }
      // A threshold between two candidates' scores: MMR picks only among those at least it.
      const plain = f32.search([query], { topK: 30 }).results[0];
      const threshold = (plain[11].score + plain[12].score) / 2;
      const cut = f32.search([query], { topK: 20, scoreThreshold: threshold, mmr: { diversity: 0.9, candidates: 100 } }).results[0];
      expect(cut.map((h) => h.id).sort()).to.deep.equal(
        plain
          .slice(0, 12)
          .map((h) => h.id)
          .sort(),
      );
    }
  });

  it('near-duplicate clusters: one pick from each', () => {
    const rng = seededRng(71);
    const dim = 16;
    const index = new VectorIndex(loadKernelModule(), 1000);
    const records = [];
    for (let c = 0; c < 5; c++) {
      for (let m = 0; m < 20; m++) {
        const vector = Array.from({ length: dim }, (_, i) => (i === c ? 1 : 0) + (rng() - 0.5) * 1e-3);
        records.push({ id: `c${c}-${m}`, vector, metadata: { cluster: c } });
      }
    }
    index.upsert(records);
    for (let q = 0; q < 10; q++) {
      const query = Array.from({ length: dim }, (_, i) => (i < 5 ? 0.2 + rng() : rng() * 0.1));
      const plain = index.search([query], { topK: 5 }).results[0];
      expect(new Set(plain.map((h) => h.id.split('-')[0])).size, 'a plain search stays in one cluster').to.equal(1);
      const mmr = index.search([query], { topK: 5, includeMetadata: true, mmr: { diversity: 0.8 } }).results[0];
      expect(new Set(mmr.map((h) => h.id.split('-')[0])).size, 'mmr takes each cluster once').to.equal(5);
    }
  });
});
