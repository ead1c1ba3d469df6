// Per-record TTL over HTTP, by the server's injected clock: ttlMs on add,
// add-many and import; expiresAt on get, get-many, list and export; expired
// records never answered by get, count, list, search, search-many or export;
// POST /vectors/touch; the same answers from LocalIndex on the same clock;
// a restart with DATA_DIR expires each record at the same instant; bad values 400.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { LocalIndex } from '../../src/sdk/local-index.js';
import { expectError, expectOk } from '../helpers/http.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';
import { randomInt, randomVector, seededRng } from '../helpers/random.js';

const T0 = 1_700_000_000_000;
const WORDS = ['fox', 'hen', 'red', 'blue', 'sea', 'sky', 'tree', 'stone'];
const iso = (ms: number) => new Date(ms).toISOString();

describe('per-record TTL (HTTP)', () => {
  let live: LiveApp | undefined;
  let dir: string | undefined;
  let clock = T0;
  const now = () => clock;
  const start = (dataDir = '') => startApp({ dataDir, sessionTtlMs: 10_000_000, tokenRatePerMin: 0, requestRatePerSec: 0 }, { now });

  beforeEach(() => {
    clock = T0;
  });
  afterEach(async () => {
    await live?.close();
    live = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /** POST `path` as `token`, the body's answer (expecting success). */
  const post = async (token: string, path: string, body?: unknown) => expectOk(await live!.send('POST', path, { token, body }));

  /** Everything a caller reads of a session: get-many, list, count, search, search-many, export. */
  async function readAll(token: string, ids: string[], query: number[]) {
    const many = await post(token, '/vectors/get-many', { ids });
    const list = await post(token, '/vectors/list', { limit: 1000, includeMetadata: true });
    const count = await post(token, '/vectors/count', {});
    const filtered = await post(token, '/vectors/count', { filter: { g: 1 } });
    const search = await post(token, '/search', { queryVector: query, topK: 10, includeMetadata: true });
    const searchMany = await post(token, '/search-many', { queryVectors: [query, query.map((x) => -x)], topK: 5, filter: { g: 1 } });
    const exported = await live!.send('GET', '/vectors/export', { token });
    const session = await post(token, '/vectors/count', {});
    return {
      vectors: many.vectors,
      notFound: many.notFound,
      list: list.vectors,
      count: count.count,
      filtered: filtered.count,
      results: search.results,
      many: searchMany.results,
      exported: exported.text,
      vectorCount: session.session.vectorCount,
    };
  }

  it('shows ttlMs and expiresAt, and leaves a record out of every read from the instant it expires', async () => {
    live = await start();
    const token = await live.newToken();
    await post(token, '/vectors/add-many', {
      vectors: [
        { id: 'a', vector: [1, 0], metadata: { g: 1 }, ttlMs: 1000 },
        { id: 'b', vector: [0.9, 0.1], metadata: { g: 1 } },
      ],
    });
    await post(token, '/vectors/add', { id: 'c', vector: [0.8, 0.2], metadata: { g: 1 }, ttlMs: 2000 });
    expect((await post(token, '/vectors/get', { id: 'a' })).vector).to.deep.equal({
      id: 'a',
      vector: [1, 0],
      metadata: { g: 1 },
      ttlMs: 1000,
      expiresAt: iso(T0 + 1000),
    });
    clock = T0 + 999;
    let read = await readAll(token, ['a', 'b', 'c'], [1, 0]);
    expect(read.results.map((h: { id: string }) => h.id)).to.deep.equal(['a', 'b', 'c']);
    expect(read.list[0]).to.deep.equal({ id: 'a', metadata: { g: 1 }, ttlMs: 1000, expiresAt: iso(T0 + 1000) });
    expect(read.exported).to.include(`"ttlMs":1000,"expiresAt":"${iso(T0 + 1000)}"`);
    clock = T0 + 1000;
    read = await readAll(token, ['a', 'b', 'c'], [1, 0]);
    expect(read.notFound).to.deep.equal(['a']);
    expect(read.list.map((v: { id: string }) => v.id)).to.deep.equal(['b', 'c']);
    expect([read.count, read.filtered, read.vectorCount]).to.deep.equal([2, 2, 2]);
    expect(read.results.map((h: { id: string }) => h.id)).to.deep.equal(['b', 'c']);
    expect(read.many.flat().map((h: { id: string }) => h.id)).to.not.include('a');
    expect(read.exported.split('\n')[0]).to.include('"count":2');
    expect(read.exported).to.not.include('"id":"a"');
    expectError(await live.send('POST', '/vectors/get', { token, body: { id: 'a' } }), 404, 'VECTOR_NOT_FOUND');
    expectError(await live.send('POST', '/vectors/metadata/set', { token, body: { id: 'a', metadata: {} } }), 404, 'VECTOR_NOT_FOUND');
    expectError(await live.send('POST', '/search', { token, body: { queryId: 'a' } }), 404, 'VECTOR_NOT_FOUND');
    // The sweep frees it; the answers stay the same.
    const before = await readAll(token, ['a', 'b', 'c'], [1, 0]);
    const session = [...live.store.registry.liveSessions()][0];
    expect(session.index.size).to.equal(3);
    await live.store.expirySweep.sweep();
    expect(session.index.size).to.equal(2);
    const after = await readAll(token, ['a', 'b', 'c'], [1, 0]);
    expect({ ...after, exported: '' }).to.deep.equal({ ...before, exported: '' });
  });

  it('sweeps a large expiry in many write turns, a slice each, while other sessions are answered between them', async () => {
    live = await start();
    const token = await live.newToken();
    const other = await live.newToken();
    await post(other, '/vectors/add', { id: 'x', vector: [1, 0, 0, 0] });
    const rng = seededRng(3);
    for (let from = 0; from < 20_000; from += 1000) {
      const vectors = Array.from({ length: 1000 }, (_, i) => ({ id: `e${from + i}`, vector: randomVector(rng, 4), metadata: { i: from + i }, ttlMs: 10 }));
      await post(token, '/vectors/add-many', { vectors });
    }
    clock = T0 + 10;
    const { writes } = live.store;
    const removed: number[] = [];
    const remove = writes.removeExpired.bind(writes);
    writes.removeExpired = async (session, slices) => {
      const n = await remove(session, slices);
      removed.push(n);
      return n;
    };
    const turnsSeen: number[] = [];
    const sweeping = live.store.expirySweep.sweep();
    // Another session's reads go on meanwhile: each notes how many sweep turns had run when it was answered.
    while (removed.reduce((a, b) => a + b, 0) < 20_000 && turnsSeen.length < 1000) {
      expect((await post(other, '/vectors/count', {})).count).to.equal(1);
      turnsSeen.push(removed.length);
    }
    await sweeping;
    expect(removed.reduce((a, b) => a + b, 0)).to.equal(20_000);
    expect(removed.length, 'turns').to.be.greaterThan(1);
    expect(
      turnsSeen.some((turns) => turns > 0 && turns < removed.length),
      'a read answered between two turns of the sweep',
    ).to.equal(true);
    expect(Math.max(...removed)).to.be.at.most(4096);
    const session = [...live.store.registry.liveSessions()].find((s) => s.index.has('x') === false)!;
    expect(session.index.size).to.equal(0);
  });

  it('renews by POST /vectors/touch, and a replace without ttlMs clears the ttl', async () => {
    live = await start();
    const token = await live.newToken();
    await post(token, '/vectors/add-many', {
      vectors: [
        { id: 'a', vector: [1, 0], ttlMs: 100 },
        { id: 'b', vector: [0, 1], ttlMs: 100 },
        { id: 'c', vector: [1, 1] },
      ],
    });
    clock = T0 + 60;
    const touched = await post(token, '/vectors/touch', { ids: ['a', 'c', 'zz', 'a'] });
    expect(touched.mutation).to.deep.equal({ touched: 2, notFound: ['zz'] });
    await post(token, '/vectors/add', { id: 'b', vector: [0, 2] });
    await post(token, '/vectors/metadata/patch', { id: 'a', patch: { n: 1 } });
    clock = T0 + 159;
    expect((await post(token, '/vectors/get', { id: 'a' })).vector).to.include({ ttlMs: 100, expiresAt: iso(T0 + 160) });
    expect((await post(token, '/vectors/get', { id: 'b' })).vector).to.not.have.property('expiresAt');
    clock = T0 + 160;
    expect((await post(token, '/vectors/get-many', { ids: ['a', 'b', 'c'] })).notFound).to.deep.equal(['a']);
    expect((await post(token, '/vectors/touch', { ids: ['a'] })).mutation).to.deep.equal({ touched: 0, notFound: ['a'] });
    // An expired id written again is an add.
    expect((await post(token, '/vectors/add', { id: 'a', vector: [1, 0] })).mutation).to.deep.equal({ added: 1, replaced: 0 });
  });

  it('refuses bad ttlMs, touch and import expiresAt values with 400', async () => {
    live = await start();
    const token = await live.newToken();
    const max = live.config.maxRecordTtlMs;
    for (const ttlMs of [0, -1, 1.5, '10', null, max + 1]) {
      const add = await live.send('POST', '/vectors/add', { token, body: { id: 'a', vector: [1, 0], ttlMs } });
      expect(expectError(add, 400, 'VALIDATION_ERROR').details.issues[0].path, String(ttlMs)).to.equal('/ttlMs');
      const many = await live.send('POST', '/vectors/add-many', {
        token,
        body: {
          vectors: [
            { id: 'a', vector: [1, 0] },
            { id: 'b', vector: [1, 0], ttlMs },
          ],
        },
      });
      expect(expectError(many, 400, 'VALIDATION_ERROR').details.issues[0].path).to.equal('/vectors/1/ttlMs');
    }
    for (const body of [{}, { ids: [] }, { ids: 'a' }, { ids: [1] }, { ids: ['a'], more: 1 }]) {
      expectError(await live.send('POST', '/vectors/touch', { token, body }), 400, 'VALIDATION_ERROR');
    }
    const ids = Array.from({ length: live.config.maxGetManyBatch + 1 }, (_, i) => `i${i}`);
    expectError(await live.send('POST', '/vectors/touch', { token, body: { ids } }), 400, 'BATCH_TOO_LARGE');
    const header = '{"format":"tempvec-export","version":1,"dimensions":2,"metric":"cosine","vectorType":"float32","count":1}\n';
    const importOf = (line: string) =>
      live!.send('POST', '/vectors/import', { token, raw: header + line + '\n', headers: { 'content-type': 'application/x-ndjson' } });
    expectError(await importOf(`{"id":"a","vector":[1,0],"expiresAt":"${iso(T0 + 5)}"}`), 400, 'VALIDATION_ERROR');
    expectError(await importOf(`{"id":"a","vector":[1,0],"ttlMs":10,"expiresAt":"${iso(T0 + 11)}"}`), 400, 'VALIDATION_ERROR');
    expectError(await importOf(`{"id":"a","vector":[1,0],"ttlMs":10,"expiresAt":"soon"}`), 400, 'VALIDATION_ERROR');
    expect((await post(token, '/vectors/count')).count).to.equal(0);
  });

  it('imports an export with each record expiring at the same instant', async () => {
    live = await start();
    const from = await live.newToken();
    await post(from, '/vectors/add-many', {
      vectors: [
        { id: 'a', vector: [1, 0], ttlMs: 100 },
        { id: 'b', vector: [0, 1] },
      ],
    });
    clock = T0 + 40;
    const text = (await live.send('GET', '/vectors/export', { token: from })).text;
    const to = await live.newToken();
    const imported = await live.send('POST', '/vectors/import', { token: to, raw: text, headers: { 'content-type': 'application/x-ndjson' } });
    expectOk(imported);
    expect((await post(to, '/vectors/get', { id: 'a' })).vector).to.include({ ttlMs: 100, expiresAt: iso(T0 + 100) });
    clock = T0 + 100;
    expect((await post(to, '/vectors/list', {})).vectors).to.deep.equal([{ id: 'b' }]);
  });

  it('answers as LocalIndex on the same clock, on random data with random ttls, touches and replaces', async () => {
    live = await start();
    const token = await live.newToken();
    const local = await LocalIndex.load({ wasm: loadKernelModule(), clock: now });
    const rng = seededRng(7);
    const dim = 6;
    for (let step = 0; step < 12; step++) {
      const records = Array.from({ length: 30 }, () => {
        const ttl = randomInt(rng, 3) === 0 ? {} : { ttlMs: 1 + randomInt(rng, 300) };
        const text = Array.from({ length: 1 + randomInt(rng, 4) }, () => WORDS[randomInt(rng, WORDS.length)]).join(' ');
        return { id: `r${randomInt(rng, 120)}`, vector: randomVector(rng, dim), metadata: { g: randomInt(rng, 2) }, text, ...ttl };
      });
      const unique = [...new Map(records.map((r) => [r.id, r])).values()];
      const server = await post(token, '/vectors/add-many', { vectors: unique });
      expect(server.mutation, `step ${step}`).to.deep.equal(local.addMany(unique));
      clock += randomInt(rng, 80);
      const touch = Array.from({ length: 5 }, () => `r${randomInt(rng, 120)}`);
      expect((await post(token, '/vectors/touch', { ids: touch })).mutation).to.deep.equal(local.touch(touch));
      clock += randomInt(rng, 80);
      const query = randomVector(rng, dim);
      const read = await readAll(token, ['r1', 'r2', 'r3', 'r50'], query);
      expect(read.vectors).to.deep.equal(['r1', 'r2', 'r3', 'r50'].map((id) => local.get(id)).filter(Boolean));
      expect(read.list).to.deep.equal(local.list({ limit: 1000, includeMetadata: true }).vectors);
      expect([read.count, read.filtered, read.vectorCount]).to.deep.equal([local.count(), local.count({ g: 1 }), local.size]);
      expect(read.results).to.deep.equal(local.search(query, { topK: 10, includeMetadata: true }).results);
      expect(read.many).to.deep.equal(local.searchMany([query, query.map((x) => -x)], { topK: 5, filter: { g: 1 } }).results);
      expect(read.exported).to.equal(local.export({ vectorEncoding: 'numbers' }));
      // Keyword and hybrid: BM25's statistics over the live texts only, on both.
      const word = WORDS[randomInt(rng, WORDS.length)];
      const keyword = await post(token, '/search', { queryText: word, topK: 10 });
      expect(keyword.results, `keyword ${word}`).to.deep.equal(local.searchText(word, { topK: 10 }).results);
      const hybrid = await post(token, '/search', { queryVector: query, queryText: word, topK: 10 });
      expect(hybrid.results, `hybrid ${word}`).to.deep.equal(local.search(query, { text: word, topK: 10 }).results);
      if (step % 4 === 3) await live.store.expirySweep.sweep();
    }
  });

  it('expires each record at the same instant after a restart with DATA_DIR, renewals and later writes included', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tempvec-ttl-'));
    live = await start(dir);
    const token = await live.newToken();
    await post(token, '/vectors/add-many', {
      vectors: [
        { id: 'a', vector: [1, 0], metadata: { g: 1 }, ttlMs: 100 },
        { id: 'b', vector: [0, 1], ttlMs: 300 },
        { id: 'c', vector: [1, 1] },
        { id: 'd', vector: [1, 2], ttlMs: 50 },
      ],
    });
    clock = T0 + 80;
    await post(token, '/vectors/metadata/set', { id: 'a', metadata: { g: 2 } });
    await post(token, '/vectors/touch', { ids: ['a'] }); // a: T0 + 180
    await post(token, '/vectors/add', { id: 'd', vector: [2, 1], ttlMs: 20 }); // d expired at T0 + 50: added again, to T0 + 100
    const expected = async () => ({
      at80: await readAll(token, ['a', 'b', 'c', 'd'], [1, 0]),
    });
    const before = await expected();
    await live.close();
    live = await start(dir);
    expect(await expected()).to.deep.equal(before);
    for (const t of [T0 + 99, T0 + 100, T0 + 179, T0 + 180, T0 + 300]) {
      clock = t;
      const read = await readAll(token, ['a', 'b', 'c', 'd'], [1, 0]);
      const live_ = ['a', 'b', 'c', 'd'].filter((id) => ({ a: 180, b: 300, c: Infinity, d: 100 })[id]! > t - T0);
      expect(
        read.vectors.map((v: { id: string }) => v.id),
        `at ${t - T0}`,
      ).to.deep.equal(live_);
    }
    // Reopened after a's first expiry but before its renewed one: its metadata set in between is replayed too.
    await live.close();
    clock = T0 + 150;
    live = await start(dir);
    expect((await post(token, '/vectors/get', { id: 'a' })).vector).to.include({ expiresAt: iso(T0 + 180) });
    expect((await post(token, '/vectors/get', { id: 'a' })).vector.metadata).to.deep.equal({ g: 2 });
    clock = T0 + 300;
    // Reopened past every expiry but c's: nothing comes back.
    await live.close();
    live = await start(dir);
    expect((await post(token, '/vectors/list', {})).vectors).to.deep.equal([{ id: 'c' }]);
    // A compaction writes only the live records, and the log still reopens the same.
    const session = [...live.store.registry.liveSessions()][0];
    await live.store.compactLog(session);
    await live.close();
    live = await start(dir);
    expect((await post(token, '/vectors/list', {})).vectors).to.deep.equal([{ id: 'c' }]);
  });
});
