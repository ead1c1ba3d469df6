// Model-based test: random sequences of add, add-many, replace, delete,
// delete-many (by ids and by filter), metadata set/patch/delete, import
// (whole or truncated), clear, reset and search run against the service and
// against a plain in-memory model; after every step get, has, the counts
// (filtered too), the listing in insertion order and an exact top-K search
// must equal the model's.
//
// Vectors are small integers under l2, so every distance is exact in float32
// and results (ties broken by insertion order included) compare with deep
// equality, not a tolerance.
import { expect } from 'chai';
import fc from 'fast-check';
import { referenceSearch, type ReferenceRow } from '../helpers/reference.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';
import { scaled } from '../helpers/scale.js';

const RUNS = scaled(15);
const IDS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', '__proto__'];

interface Row {
  vector: number[];
  metadata: Record<string, unknown>;
  seq: number;
}

/** What the service should hold: the rules of the spec, written plainly. */
class Model {
  rows = new Map<string, Row>();
  dim: number | null = null;
  seq = 0;

  /** null when the batch is valid, else the error code the service must answer. */
  add(records: { id: string; vector: number[]; metadata?: Record<string, unknown> }[]): string | null {
    const dim = this.dim ?? records[0].vector.length;
    if (records.some((r) => r.vector.length !== dim)) return 'DIMENSION_MISMATCH';
    this.dim = dim;
    for (const r of records) this.rows.set(r.id, { vector: r.vector, metadata: r.metadata ?? {}, seq: this.seq++ });
    return null;
  }

  /** Filtered rows in the reference's shape; Map order is irrelevant (ties go by seq). */
  referenceRows(filter?: { g: number }): ReferenceRow[] {
    return [...this.rows].filter(([, row]) => !filter || row.metadata.g === filter.g).map(([id, row]) => ({ id, vector: row.vector, seq: row.seq }));
  }
}

type Op =
  | { op: 'add'; id: string; vector: number[]; metadata?: Record<string, unknown> }
  | { op: 'add-many'; vectors: { id: string; vector: number[]; metadata?: Record<string, unknown> }[] }
  | { op: 'delete'; id: string }
  | { op: 'delete-many'; ids: string[] }
  | { op: 'metadata-set'; id: string; metadata: Record<string, unknown> }
  | { op: 'metadata-delete'; id: string }
  | { op: 'delete-filter'; g: number }
  | { op: 'metadata-patch'; id: string; patch: Record<string, unknown> }
  | { op: 'import'; vectors: { id: string; vector: number[]; metadata?: Record<string, unknown> }[]; truncated: boolean }
  | { op: 'clear' }
  | { op: 'reset' }
  | { op: 'search'; queryVector: number[]; topK: number; filter?: { g: number } };

function ops(dim: number): fc.Arbitrary<Op[]> {
  const id = fc.constantFrom(...IDS);
  // Mostly the run's dimension; sometimes one more, which is refused once the session is initialized.
  const vector = fc
    .oneof({ weight: 9, arbitrary: fc.constant(dim) }, { weight: 1, arbitrary: fc.constant(dim + 1) })
    .chain((n) => fc.array(fc.integer({ min: -3, max: 3 }), { minLength: n, maxLength: n }));
  const metadata = fc.option(fc.record({ g: fc.integer({ min: 0, max: 2 }), note: fc.string({ maxLength: 3 }) }), { nil: undefined });
  const record = fc.record({ id, vector, metadata }, { requiredKeys: ['id', 'vector'] });
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 5, arbitrary: record.map((r) => ({ op: 'add' as const, ...r })) },
    { weight: 3, arbitrary: fc.array(record, { minLength: 1, maxLength: 6 }).map((vectors) => ({ op: 'add-many' as const, vectors })) },
    { weight: 2, arbitrary: id.map((i) => ({ op: 'delete' as const, id: i })) },
    { weight: 1, arbitrary: fc.array(id, { minLength: 1, maxLength: 4 }).map((ids) => ({ op: 'delete-many' as const, ids })) },
    { weight: 2, arbitrary: fc.record({ id, metadata: fc.record({ g: fc.integer({ min: 0, max: 2 }) }) }).map((r) => ({ op: 'metadata-set' as const, ...r })) },
    { weight: 1, arbitrary: id.map((i) => ({ op: 'metadata-delete' as const, id: i })) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 2 }).map((g) => ({ op: 'delete-filter' as const, g })) },
    {
      weight: 2,
      arbitrary: fc
        .record({ id, patch: fc.record({ g: fc.option(fc.integer({ min: 0, max: 2 })), note: fc.option(fc.string({ maxLength: 3 })) }, { requiredKeys: [] }) })
        .map((r) => ({ op: 'metadata-patch' as const, ...r })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.array(record, { minLength: 1, maxLength: 6 }), fc.boolean())
        .map(([vectors, truncated]) => ({ op: 'import' as const, vectors, truncated })),
    },
    { weight: 1, arbitrary: fc.constant({ op: 'clear' as const }) },
    { weight: 1, arbitrary: fc.constant({ op: 'reset' as const }) },
    {
      weight: 3,
      arbitrary: fc
        .record(
          {
            queryVector: fc.array(fc.integer({ min: -3, max: 3 }), { minLength: dim, maxLength: dim }),
            topK: fc.integer({ min: 1, max: 10 }),
            filter: fc.option(fc.record({ g: fc.integer({ min: 0, max: 2 }) }), { nil: undefined }),
          },
          { requiredKeys: ['queryVector', 'topK'] },
        )
        .map((r) => ({ op: 'search' as const, ...r })),
    },
  );
  return fc.array(op, { minLength: 1, maxLength: 25 });
}

describe('model-based: random operation sequences against a plain model', function () {
  this.timeout(120_000);
  let live: LiveApp;
  let token: string;

  before(async () => {
    live = await startApp({ tokenRatePerMin: 0, requestRatePerSec: 0 });
    token = await live.newToken();
  });
  after(() => live.close());

  const post = (path: string, body?: unknown) => live.send('POST', path, { token, body });

  /** Apply one op to both; the service's answer must be the model's. */
  async function step(model: Model, op: Op): Promise<void> {
    switch (op.op) {
      case 'add':
      case 'add-many': {
        const vectors = op.op === 'add' ? [{ id: op.id, vector: op.vector, metadata: op.metadata }] : op.vectors;
        const res = op.op === 'add' ? await post('/vectors/add', { ...vectors[0], metric: 'l2' }) : await post('/vectors/add-many', { vectors, metric: 'l2' });
        const error = model.add(vectors);
        if (error) expect(res.body.error?.code, JSON.stringify(res.body)).to.equal(error);
        else expect(res.status, JSON.stringify(res.body)).to.equal(200);
        return;
      }
      case 'delete':
      case 'delete-many': {
        const ids = op.op === 'delete' ? [op.id] : op.ids;
        const expected = ids.filter((id, i) => ids.indexOf(id) === i && model.rows.has(id)).length;
        const res = op.op === 'delete' ? await post('/vectors/delete', { id: op.id }) : await post('/vectors/delete-many', { ids });
        expect(res.body.mutation.deleted).to.equal(expected);
        for (const id of ids) model.rows.delete(id);
        return;
      }
      case 'metadata-set':
      case 'metadata-delete': {
        const metadata = op.op === 'metadata-set' ? op.metadata : {};
        const res =
          op.op === 'metadata-set' ? await post('/vectors/metadata/set', { id: op.id, metadata }) : await post('/vectors/metadata/delete', { id: op.id });
        const row = model.rows.get(op.id);
        expect(res.status).to.equal(row ? 200 : 404);
        if (row) row.metadata = metadata;
        return;
      }
      case 'delete-filter': {
        const matching = [...model.rows].filter(([, row]) => row.metadata.g === op.g).map(([id]) => id);
        const res = await post('/vectors/delete-many', { filter: { g: op.g } });
        expect(res.body.mutation, JSON.stringify(res.body)).to.deep.equal({ deleted: matching.length, notFound: [] });
        for (const id of matching) model.rows.delete(id);
        return;
      }
      case 'metadata-patch': {
        const res = await post('/vectors/metadata/patch', { id: op.id, patch: op.patch });
        const row = model.rows.get(op.id);
        expect(res.status, JSON.stringify(res.body)).to.equal(row ? 200 : 404);
        if (!row) return;
        const metadata = { ...row.metadata };
        for (const [key, value] of Object.entries(op.patch)) {
          if (value === null) delete metadata[key];
          else metadata[key] = value;
        }
        row.metadata = metadata;
        expect(res.body.metadata).to.deep.equal(metadata);
        return;
      }
      case 'import': {
        // The header announces the first record's length (refused when the session has another) and, when truncated, one line more than sent.
        const header = {
          format: 'tempvec-export',
          version: 1,
          dimensions: op.vectors[0].vector.length,
          metric: 'l2',
          vectorType: 'float32',
          count: op.vectors.length + (op.truncated ? 1 : 0),
        };
        const raw = [header, ...op.vectors].map((line) => JSON.stringify(line)).join('\n') + '\n';
        const res = await live.send('POST', '/vectors/import', { token, raw, headers: { 'content-type': 'application/x-ndjson' } });
        if (op.truncated) {
          expect(res.body.error?.code, JSON.stringify(res.body)).to.equal('INVALID_IMPORT');
          return;
        }
        const error = model.dim !== null && header.dimensions !== model.dim ? 'DIMENSION_MISMATCH' : model.add(op.vectors);
        if (error) expect(res.body.error?.code, JSON.stringify(res.body)).to.equal(error);
        else expect(res.status, JSON.stringify(res.body)).to.equal(200);
        return;
      }
      case 'clear':
        expect((await post('/vectors/clear')).body.mutation.deleted).to.equal(model.rows.size);
        model.rows.clear();
        return;
      case 'reset':
        expect((await post('/index/reset')).body.mutation.deleted).to.equal(model.rows.size);
        model.rows.clear();
        model.dim = null;
        model.seq = 0;
        return;
      case 'search':
        await expectSearch(model, op.queryVector, op.topK, op.filter);
    }
  }

  async function expectSearch(model: Model, queryVector: number[], topK: number, filter?: { g: number }) {
    const res = await post('/search', { queryVector, topK, filter });
    if (model.dim !== null && model.rows.size > 0 && queryVector.length !== model.dim) {
      expect(res.body.error.code).to.equal('DIMENSION_MISMATCH');
      return;
    }
    if (model.dim !== null && queryVector.length !== model.dim) return; // empty index: either answer is fine
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const expected = referenceSearch('l2', queryVector, model.referenceRows(filter), topK);
    expect(res.body.results, `search ${JSON.stringify({ queryVector, topK, filter })}`).to.deep.equal(expected);
  }

  /** get, has, counts and search after every step. */
  async function expectSameState(model: Model, dim: number) {
    const many = await post('/vectors/get-many', { ids: IDS });
    const expectedVectors = IDS.filter((id) => model.rows.has(id)).map((id) => ({
      id,
      vector: model.rows.get(id)!.vector,
      metadata: model.rows.get(id)!.metadata,
    }));
    expect(many.body.vectors).to.deep.equal(expectedVectors);
    expect(many.body.notFound).to.deep.equal(IDS.filter((id) => !model.rows.has(id)));
    const probe = IDS[model.seq % IDS.length];
    expect((await post('/vectors/has', { id: probe })).body.has).to.equal(model.rows.has(probe));
    const { session } = (await live.send('GET', '/session', { token })).body;
    expect(session.vectorCount).to.equal(model.rows.size);
    expect(session.config.dimensions).to.equal(model.dim);
    for (const g of [0, 1]) {
      const count = [...model.rows.values()].filter((row) => row.metadata.g === g).length;
      expect((await post('/vectors/count', { filter: { g } })).body.count).to.equal(count);
    }
    // The listing, two per page, is the model's rows in the order of their last write.
    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const page = (await post('/vectors/list', { limit: 2, cursor })).body;
      listed.push(...page.vectors.map((v: { id: string }) => v.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(listed).to.deep.equal([...model.rows].sort(([, a], [, b]) => a.seq - b.seq).map(([id]) => id));
    // The facet of g (count desc, then value), and the listing by g: ties, then rows without g, in the order of their last write.
    const bySeq = [...model.rows].sort(([, a], [, b]) => a.seq - b.seq);
    const withG = bySeq.filter(([, row]) => typeof row.metadata.g === 'number');
    const counts = new Map<number, number>();
    for (const [, row] of withG) counts.set(row.metadata.g as number, (counts.get(row.metadata.g as number) ?? 0) + 1);
    const values = [...counts].map(([value, count]) => ({ value, count })).sort((a, b) => b.count - a.count || a.value - b.value);
    expect((await post('/vectors/facet', { path: 'g' })).body.values).to.deep.equal(values);
    const byG: string[] = [];
    do {
      const page = (await post('/vectors/list', { limit: 2, cursor, orderBy: { path: 'g' } })).body;
      byG.push(...page.vectors.map((v: { id: string }) => v.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    const expectedByG = [
      ...withG.sort(([, a], [, b]) => (a.metadata.g as number) - (b.metadata.g as number)),
      ...bySeq.filter(([, row]) => typeof row.metadata.g !== 'number'),
    ];
    expect(byG).to.deep.equal(expectedByG.map(([id]) => id));
    await expectSearch(
      model,
      Array.from({ length: model.dim ?? dim }, (_, i) => i - 1),
      5,
    );
  }

  it('agrees with the model after every step', async () => {
    const sequences = fc.integer({ min: 1, max: 4 }).chain((dim) => fc.tuple(fc.constant(dim), ops(dim)));
    await fc.assert(
      fc.asyncProperty(sequences, async ([dim, sequence]) => {
        await post('/index/reset');
        const model = new Model();
        for (const op of sequence) {
          await step(model, op);
          await expectSameState(model, dim);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
