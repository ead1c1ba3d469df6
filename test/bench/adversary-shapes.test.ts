// bench:adversary's shapes are worst cases only if the server takes them: each
// is checked against the server's own request schemas and filter parser at
// the limits GET /limits publishes, at the limit and (where a limit binds)
// refused one past it; and its filters match none of the target's rows (but
// $nin, all), so the delete-many shape deletes nothing and can be sent again.
import { expect } from 'chai';
import * as v from 'valibot';
import { depthOf, filters, Limits, queryTexts, SCRIPTS, type Script, SHAPES, TARGET_ROWS, wideMetadata } from '../../bench/lib/adversary-shapes.js';
import { loadConfig, publicLimits } from '../../src/config.js';
import { compileFilter, parseFilter } from '../../src/index/filter.js';
import { requestSchemas } from '../../src/schemas/index.js';
import { firstTooDeep } from '../../src/schemas/json-shape.js';

const config = loadConfig({});
const published = JSON.parse(JSON.stringify(publicLimits(config)));
const L = new Limits(published);
const schemas = requestSchemas(config);
const accepted = (schema: v.GenericSchema, body: unknown) => v.safeParse(schema, body).success;

/** Filter nodes as issue 33 counts them: every element of $in/$nin and every clause of $and/$or/$not. */
function nodes(filter: unknown): number {
  if (filter === null || typeof filter !== 'object') return 0;
  let n = 0;
  for (const [key, value] of Object.entries(filter)) {
    if ((key === '$in' || key === '$nin') && Array.isArray(value)) n += value.length;
    else if ((key === '$and' || key === '$or') && Array.isArray(value)) n += value.length + value.reduce((s: number, c) => s + nodes(c), 0);
    else if (key === '$not') n += 1 + nodes(value);
    else n += nodes(value);
  }
  return n;
}

describe('bench:adversary shapes', () => {
  it('every filter is a valid count request at the published limits and matches no target row ($nin: every row)', () => {
    // Rows differ only by their number: the first 20 and the last stand for all.
    const rows = [...Array.from({ length: 20 }, (_, i) => i), TARGET_ROWS - 1].map((i) => wideMetadata(L, i, 7000));
    for (const [name, filter] of Object.entries(filters(L))) {
      expect(accepted(schemas.CountRequestSchema, { filter }), name).to.equal(true);
      expect(() => parseFilter(filter as never), name).not.to.throw();
      const match = compileFilter(filter as never);
      expect(rows.filter((m) => match(m as never)).length, name).to.equal(name.startsWith('$nin') ? rows.length : 0);
    }
  });

  it('the deep filter is exactly maxJsonDepth deep: one more level is refused', () => {
    const deep = filters(L)['deep $not/$or'];
    expect(depthOf(deep)).to.equal(config.maxJsonDepth);
    expect(accepted(schemas.CountRequestSchema, { filter: { $not: deep } })).to.equal(false);
  });

  it('depthOf counts as the server does', () => {
    const values: unknown[] = [1, 'a', [], {}, { a: {} }, [[1], { b: [2] }], { a: { b: { c: [[]] } } }, filters(L)['deep $not/$or']];
    for (const value of values) {
      const depth = depthOf(value);
      expect(firstTooDeep(value, depth), JSON.stringify(value).slice(0, 40)).to.equal(null);
      if (depth > 0) expect(firstTooDeep(value, depth - 1)).not.to.equal(null);
    }
  });

  it('the filter shapes follow maxFilterNodes once it is published', () => {
    for (const cap of [50, 500]) {
      const capped = new Limits({ ...published, maxFilterNodes: cap });
      for (const [name, filter] of Object.entries(filters(capped))) expect(nodes(filter), `${name} at ${cap}`).to.be.at.most(cap);
      expect(nodes(filters(capped)['$in arrays'])).to.be.above(cap - 5);
    }
  });

  it('metadata is within the metadata limits, close to the byte cap, and refused past it', () => {
    for (const bytes of [7000, config.maxMetadataBytes - 16]) {
      const metadata = wideMetadata(L, 3, bytes);
      expect(accepted(schemas.SetMetadataRequestSchema, { id: 'x', metadata }), `${bytes}`).to.equal(true);
      expect(JSON.stringify(metadata).length).to.be.within(bytes - 200, bytes);
    }
    const full = wideMetadata(L, 3, config.maxMetadataBytes - 16);
    expect(accepted(schemas.SetMetadataRequestSchema, { id: 'x', metadata: { ...full, more: 'x'.repeat(64) } })).to.equal(false);
  });

  it('query texts fill maxQueryTextBytes in every script, and share maxQueryTextBytesPerRequest when published', () => {
    const count = published.batch.searchMany;
    // Each text as full as maxQueryTextBytes allows, and the request's share of maxQueryTextBytesPerRequest.
    const max = Math.min(published.text.maxQueryTextBytes, Math.floor(published.text.maxQueryTextBytesPerRequest / count));
    for (const script of Object.keys(SCRIPTS) as Script[]) {
      const texts = queryTexts(L, script);
      expect(texts.length).to.equal(count);
      // Full up to one word (at most 6 characters and a space).
      for (const text of texts) expect(Buffer.byteLength(text), script).to.be.within(max - 16, max);
      const shared = queryTexts(new Limits({ ...published, text: { ...published.text, maxQueryTextBytesPerRequest: 10_000 } }), script);
      expect(
        shared.reduce((s, t) => s + Buffer.byteLength(t), 0),
        script,
      ).to.be.within(10_000 - 16 * shared.length, 10_000);
    }
  });

  it('names every shape once per route', () => {
    const keys = SHAPES.map((s) => `${s.route} ${s.name}`);
    expect(new Set(keys).size).to.equal(keys.length);
    for (const shape of SHAPES) expect(Boolean(shape.request) !== Boolean(shape.run), shape.name).to.equal(true);
  });
});
