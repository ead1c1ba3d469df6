// GET /vectors/export and POST /vectors/import over HTTP: a round trip
// gives the same vectors bit for bit and the same searches; a bad import
// changes nothing; an export is a snapshot and streams with back-pressure.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXPORT_WINDOW_BYTES } from '../../src/export/export-stream.js';
import { decodeFloat32Base64, encodeFloat32Base64 } from '../../src/schemas/base64-float32.js';
import { expectError, expectOk, useServer, type TestServer } from '../helpers/http.js';
import { startApp } from '../helpers/live-app.js';
import { randomVector, seededRng } from '../helpers/random.js';

const NDJSON = { 'content-type': 'application/x-ndjson' };

/** Every vector of a session, as stored (base64 of its float32 bytes), with metadata, in insertion order. */
async function contents(api: TestServer, token: string) {
  const out: { id: string; vector: string; metadata: unknown }[] = [];
  let cursor: string | undefined;
  do {
    const page = expectOk(
      await api.post('/vectors/list', { token, body: { limit: 1000, cursor, includeVectors: true, includeMetadata: true, vectorEncoding: 'base64' } }),
    );
    out.push(...page.vectors);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return out;
}

async function filled(api: TestServer, count: number, dim: number, seed: number, options: object = {}) {
  const token = await api.token();
  const rng = seededRng(seed);
  for (let i = 0; i < count; i += 500) {
    const vectors = Array.from({ length: Math.min(500, count - i) }, (_, j) => ({
      id: `v${i + j}`,
      vector: encodeFloat32Base64(randomVector(rng, dim).map((x) => x * 1e3)),
      metadata: (i + j) % 3 ? { n: i + j, s: 'é"\n' } : undefined,
    }));
    expectOk(await api.post('/vectors/add-many', { token, body: { vectors, ...options } }));
  }
  return token;
}

describe('GET /vectors/export and POST /vectors/import', () => {
  const api = useServer({ maxImportBytes: 1024 * 1024, maxAddManyBatch: 1000 });

  for (const encoding of ['numbers', 'base64']) {
    it(`moves a session into a new one bit for bit, with the same search results (${encoding})`, async () => {
      const source = await filled(api, 1200, 16, 3, { metric: 'l2', vectorType: 'int8' });
      expectOk(await api.post('/vectors/delete-many', { token: source, body: { filter: { n: { $lt: 40 } } } }));
      const exported = await api.get(`/vectors/export?vectorEncoding=${encoding}`, { token: source });
      expect(exported.status).to.equal(200);
      expect(exported.headers.get('content-type')).to.match(/^application\/x-ndjson/);
      expect(exported.headers.get('server-timing')).to.match(/exportOpen;dur=/);
      const lines = exported.text.trim().split('\n');
      expect(JSON.parse(lines[0])).to.deep.equal({
        format: 'tempvec-export',
        version: 1,
        dimensions: 16,
        metric: 'l2',
        vectorType: 'int8',
        analyzer: null,
        count: 1174,
      });
      expect(lines).to.have.length(1175);

      const target = await api.token();
      const imported = expectOk(await api.post('/vectors/import', { token: target, body: exported.text, headers: NDJSON }));
      expect(imported.mutation).to.deep.equal({ added: 1174, replaced: 0 });
      expect(imported.metrics).to.include.keys('importReadMs', 'capacityCheckMs', 'importMs');
      expect(imported.session.config).to.include({ dimensions: 16, metric: 'l2', vectorType: 'int8' });
      expect(await contents(api, target)).to.deep.equal(await contents(api, source));
      const query = { queryVector: randomVector(seededRng(9), 16), topK: 20, filter: { n: { $gt: 100 } }, includeMetadata: true };
      const a = expectOk(await api.post('/search', { token: source, body: query }));
      const b = expectOk(await api.post('/search', { token: target, body: query }));
      expect(b.results).to.deep.equal(a.results);
    });
  }

  it('changes nothing on a truncated, corrupt or oversized import', async () => {
    const source = await filled(api, 300, 8, 5);
    const text = (await api.get('/vectors/export?vectorEncoding=base64', { token: source })).text;
    const target = await filled(api, 10, 8, 6);
    const before = await contents(api, target);
    const lines = text.split('\n');
    const cases: [string, number, string][] = [
      [lines.slice(0, 150).join('\n') + '\n', 400, 'INVALID_IMPORT'],
      [text.slice(0, text.length - 100), 400, 'INVALID_JSON'],
      [text.replace('"v7"', '7'), 400, 'VALIDATION_ERROR'],
      [text.replace('"dimensions":8', '"dimensions":9'), 400, 'DIMENSION_MISMATCH'],
      [text + text.slice(text.indexOf('\n') + 1).repeat(50), 413, 'PAYLOAD_TOO_LARGE'],
    ];
    for (const [body, status, code] of cases) {
      const err = expectError(await api.post('/vectors/import', { token: target, body, headers: NDJSON }), status, code);
      if (code === 'INVALID_IMPORT') expect(err.details).to.deep.equal({ path: '/150', line: 151 });
      expect(await contents(api, target), code).to.deep.equal(before);
    }
    expectError(await api.post('/vectors/import', { token: target, body: text }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(
      await api.post('/vectors/import', { token: target, body: text, headers: { ...NDJSON, 'content-encoding': 'gzip' } }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it("upserts into an initialized session by id, with add-many's checks", async () => {
    const token = await filled(api, 20, 4, 7);
    const header = { format: 'tempvec-export', version: 1, dimensions: 4, metric: 'cosine', vectorType: 'float32' };
    const body = (records: object[], extra = {}) => [{ ...header, count: records.length, ...extra }, ...records].map((r) => JSON.stringify(r)).join('\n');
    const ok = expectOk(
      await api.post('/vectors/import', {
        token,
        headers: NDJSON,
        body: body([
          { id: 'v1', vector: [1, 2, 3, 4] },
          { id: 'new', vector: [4, 3, 2, 1], metadata: { x: 1 } },
        ]),
      }),
    );
    expect(ok.mutation).to.deep.equal({ added: 1, replaced: 1 });
    expect(expectOk(await api.post('/vectors/get', { token, body: { id: 'v1' } })).vector).to.deep.equal({ id: 'v1', vector: [1, 2, 3, 4], metadata: {} });
    expectError(
      await api.post('/vectors/import', { token, headers: NDJSON, body: body([{ id: 'a', vector: [1, 2, 3, 4] }], { metric: 'l2' }) }),
      409,
      'METRIC_LOCKED',
    );
    expect(
      expectError(
        await api.post('/vectors/import', {
          token,
          headers: NDJSON,
          body: body([
            { id: 'a', vector: [1, 2, 3, 4] },
            { id: 'z', vector: [0, 0, 0, 0] },
          ]),
        }),
        400,
        'ZERO_VECTOR',
      ).details,
    ).to.deep.equal({ path: '/2/vector' });
  });

  it("gives the snapshot of when it started, while writes and other sessions' searches go on", async () => {
    const source = await filled(api, 4000, 64, 8);
    const expected = await contents(api, source);
    const other = await filled(api, 50, 8, 9);
    const res = await fetch(`${api.base}/vectors/export`, { headers: { authorization: `Bearer ${source}` } });
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.done).to.equal(false);
    // Mid-stream (4000 x 64 as numbers is several MB, far more than one read): change the session, search another.
    expectOk(await api.post('/vectors/delete-many', { token: source, body: { ids: ['v3999', 'v2000', 'v1'] } }));
    expectOk(await api.post('/vectors/add', { token: source, body: { id: 'v3000', vector: new Array(64).fill(1) } }));
    expectOk(await api.post('/search', { token: other, body: { queryVector: new Array(8).fill(1) } }));
    const chunks = [first.value!];
    for (let part = await reader.read(); !part.done; part = await reader.read()) chunks.push(part.value);
    const lines = Buffer.concat(chunks).toString('utf8').trim().split('\n');
    expect(JSON.parse(lines[0]).count).to.equal(4000);
    const got = lines.slice(1).map((line) => {
      const { id, vector, metadata } = JSON.parse(line);
      return { id, vector: encodeFloat32Base64(vector), metadata };
    });
    expect(got).to.deep.equal(expected.map((v) => ({ ...v, metadata: v.metadata ?? {} })));
    expect(decodeFloat32Base64(got[5].vector)).to.have.length(64);
  });

  it('holds an export in the answers in flight until it ends, 503 when it does not fit', async () => {
    const source = await filled(api, 10_000, 64, 10);
    const inFlight = () => api.store.budget.usage().answersInFlightBytes;
    expect(inFlight()).to.equal(0);
    const res = await fetch(`${api.base}/vectors/export`, { headers: { authorization: `Bearer ${source}` } });
    const reader = res.body!.getReader();
    expect((await reader.read()).done).to.equal(false);
    // 12 MB of numbers, one read taken: the rest waits on back-pressure, its window held.
    expect(inFlight()).to.equal(EXPORT_WINDOW_BYTES);
    // Rewritten under it, the vectors it has yet to send are copied for it: counted too.
    const budgetBefore = api.store.budget.usedBytes;
    for (let i = 0; i < 10_000; i += 1000) {
      const vectors = Array.from({ length: 1000 }, (_, j) => ({ id: `v${i + j}`, vector: new Array(64).fill(j + 1) }));
      expectOk(await api.post('/vectors/add-many', { token: source, body: { vectors } }));
    }
    expect(inFlight()).to.be.above(EXPORT_WINDOW_BYTES + 5000 * 64 * 4);
    expect(api.store.budget.usedBytes).to.be.above(budgetBefore + 5000 * 64 * 4);
    await reader.cancel();
    for (let turn = 0; turn < 200 && inFlight() > 0; turn++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(inFlight()).to.equal(0);

    const { budget } = api.store;
    const limit = budget.limitBytes;
    budget.limitBytes = budget.usedBytes + EXPORT_WINDOW_BYTES - 1;
    try {
      const refused = await api.get('/vectors/export', { token: source });
      expectError(refused, 503, 'SERVER_AT_CAPACITY');
      expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
    } finally {
      budget.limitBytes = limit;
    }
    expect(inFlight()).to.equal(0);
  });

  it('takes a line of MAX_BODY_BYTES and refuses one byte more (or a huge one) with 413 IMPORT_LINE_TOO_LARGE, nothing imported', async () => {
    const live = await startApp({ maxBodyBytes: 4096, maxImportBytes: 4 << 20, maxJsonDepth: 3 });
    try {
      const token = await live.newToken();
      const seed = { id: 'seed', vector: [1, 2], metadata: { n: 1 } };
      expect((await live.send('POST', '/vectors/add', { token, body: seed })).status).to.equal(200);
      const header = (count: number) => `{"format":"tempvec-export","version":1,"dimensions":2,"metric":"cosine","vectorType":"float32","count":${count}}`;
      const line = (id: string, length: number) => {
        const bare = `{"id":"${id}","vector":[3,4],"metadata":{"p":""}}`;
        return bare.replace('"p":""', `"p":"${'x'.repeat(length - bare.length)}"`);
      };
      const stored = async () => (await live.send('POST', '/vectors/list', { token, body: { includeMetadata: true } })).body.vectors;
      const before = await stored();
      const refused = [
        `${header(2)}\n${line('a', 100)}\n${line('b', 4097)}\n`,
        // 16 times the limit (one the client can send whole before the answer: the reader's test refuses a longer one mid-stream).
        `${header(2)}\n${line('a', 100)}\n${'x'.repeat(64 << 10)}`,
        `${header(1)}\n{"id":"d","vector":[3,4],"metadata":{"a":{"a":{"a":{}}}}}\n`,
      ];
      for (const [i, raw] of refused.entries()) {
        const reply = await live.send('POST', '/vectors/import', { token, raw, headers: NDJSON });
        if (i < 2) {
          expect(reply.status).to.equal(413);
          expect(reply.body.error.code).to.equal('IMPORT_LINE_TOO_LARGE');
          expect(reply.body.error.details).to.deep.equal({ path: '/2', line: 3, limit: 4096 });
        } else {
          expect(reply.body.error.code).to.equal('VALIDATION_ERROR');
          expect(reply.body.error.details.path).to.equal('/1/metadata/a/a/a');
        }
        expect(await stored()).to.deep.equal(before);
      }
      expect(live.store.budget!.usage().bodiesInFlightBytes).to.equal(0);
      // At the limit: taken, the body's reservation held until the import is written.
      const raw = `${header(2)}\n${line('a', 100)}\n${line('b', 4096)}\n`;
      const writes = live.store.writes;
      const importPlan = writes.importPlan.bind(writes);
      let heldWhileWriting = -1;
      writes.importPlan = (...args) => {
        heldWhileWriting = live.store.budget!.usage().bodiesInFlightBytes;
        return importPlan(...args);
      };
      const reply = await live.send('POST', '/vectors/import', { token, raw, headers: NDJSON });
      expect(reply.body.mutation).to.deep.equal({ added: 2, replaced: 0 });
      expect(heldWhileWriting).to.equal(Buffer.byteLength(raw));
      expect(live.store.budget!.usage().bodiesInFlightBytes).to.equal(0);
    } finally {
      await live.close();
    }
  });

  it("analyses an import's texts again in slices when the analyzer changed before its turn, and writes it whole", async () => {
    const token = await api.token();
    const header = { format: 'tempvec-export', version: 1, dimensions: 3, metric: 'cosine', vectorType: 'float32', analyzer: null, count: 50 };
    const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: `r${i}`, vector: [1, i, 2], text: `running dogs ${i}` }));
    const { store } = api;
    const encodeImport = store.encodeImport.bind(store);
    let raced = 0;
    store.encodeImport = async (plan) => {
      // Another request fixes the session's analyzer between the import's check and its write.
      if (raced++ === 0) expectOk(await api.post('/vectors/add', { token, body: { id: 'first', vector: [1, 1, 1], text: 'runs', analyzer: 'english' } }));
      return encodeImport(plan);
    };
    try {
      const reply = await api.post('/vectors/import', { token, body: [JSON.stringify(header), ...lines].join('\n'), headers: NDJSON });
      expect(expectOk(reply).mutation).to.deep.equal({ added: 50, replaced: 0 });
    } finally {
      store.encodeImport = encodeImport;
    }
    expect(raced).to.equal(2);
    // Stemmed by english: "running" is "run" in every text.
    expect(expectOk(await api.post('/search', { token, body: { queryText: 'run' } })).stats.textMatched).to.equal(51);
  });

  it('survives a restart with DATA_DIR: an import is replayed whole', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tempvec-import-'));
    try {
      const source = await filled(api, 2500, 4, 10);
      const text = (await api.get('/vectors/export?vectorEncoding=base64', { token: source })).text;
      let live = await startApp({ dataDir: dir, maxImportBytes: 1 << 20 });
      const token = await live.newToken();
      expect((await live.send('POST', '/vectors/import', { token, raw: text, headers: NDJSON })).body.mutation).to.deep.equal({ added: 2500, replaced: 0 });
      await live.close();
      live = await startApp({ dataDir: dir });
      const exported = await live.send('GET', '/vectors/export?vectorEncoding=base64', { token });
      await live.close();
      expect(exported.text).to.equal(text);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
