// Records stored by their text and searches by text over HTTP: the stored
// vector is the embedding /embed gives (and the encoder run directly), a
// text query finds what the query by its embedded vector finds (ids and
// scores), hybrid as with a numeric vector; the session's model (its lock,
// its errors, nothing stored by a refused request) and export/import.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTextEmbedder } from '../../src/embedding/load-node.js';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { startApp } from '../helpers/live-app.js';

const DOCS = [
  { id: 'cat', text: 'The cat sleeps on the warm windowsill.', metadata: { kind: 'animal' } },
  { id: 'dog', text: 'A dog barks at the postman every morning.', metadata: { kind: 'animal' } },
  { id: 'stocks', text: 'Stock markets fell sharply after the announcement.', metadata: { kind: 'money' } },
  { id: 'rain', text: 'Heavy rain is expected across the north tomorrow.', metadata: { kind: 'weather' } },
  { id: 'bread', text: 'Knead the dough and let the bread rise for an hour.', metadata: { kind: 'food' } },
];

describe('records stored by their text, searches by text', () => {
  const api = useServer({ embeddingThreads: 1 });
  const direct = loadTextEmbedder();
  const embedOf = (text: string) => Array.from(direct.embed([text]));
  /** JSON numbers as the float32 values they stand for (an answer writes each float32 in its shortest form). */
  const f32 = (values: number[]) => Array.from(Float32Array.from(values));

  async function textSession(): Promise<string> {
    const token = await api.token();
    expectOk(await api.post('/vectors/add-many', { token, body: { vectors: DOCS } }));
    return token;
  }

  it('stores a record without a vector with the embedding of its text: the model fixes dimension 512, cosine and config.embedding', async () => {
    const token = await textSession();
    const { vector, session } = expectOk(await api.post('/vectors/get', { token, body: { id: 'rain', includeText: true } }));
    expect(f32(vector.vector)).to.deep.equal(embedOf(DOCS[3].text));
    expect(vector.text).to.equal(DOCS[3].text);
    expect(session.config).to.include({ dimensions: 512, metric: 'cosine', embedding: 'use-lite-512' });
    const [viaEmbed] = expectOk(await api.post('/embed', { token, body: { texts: [DOCS[3].text] } })).vectors;
    expect(f32(vector.vector)).to.deep.equal(f32(viaEmbed));
  });

  it('mixes records with and without vectors in one batch; a vector of another length is refused with nothing stored', async () => {
    const token = await api.token();
    const given = embedOf('anything at all').map((x) => -x);
    const body = {
      vectors: [
        { id: 'given', vector: given },
        { id: 'texted', text: 'a sentence to embed' },
      ],
    };
    expectOk(await api.post('/vectors/add-many', { token, body }));
    const got = expectOk(await api.post('/vectors/get-many', { token, body: { ids: ['given', 'texted'] } })).vectors;
    expect(got.map((g: { vector: number[] }) => f32(g.vector))).to.deep.equal([Array.from(Float32Array.from(given)), embedOf('a sentence to embed')]);
    const other = await api.token();
    const bad = {
      vectors: [
        { id: 'short', vector: [1, 2, 3] },
        { id: 'texted', text: 'a sentence' },
      ],
    };
    expect(expectError(await api.post('/vectors/add-many', { token: other, body: bad }), 400, 'DIMENSION_MISMATCH').details.path).to.equal('/vectors/0/vector');
    expect(expectOk(await api.get('/session', { token: other })).session.vectorCount).to.equal(0);
  });

  it('a query {"text"} finds what a query by its embedded vector finds, ids and scores, in search and search-many', async () => {
    const token = await textSession();
    const query = 'what will the weather be like';
    const byText = expectOk(await api.post('/search', { token, body: { queryVector: { text: query }, topK: 5 } }));
    const byVector = expectOk(await api.post('/search', { token, body: { queryVector: embedOf(query), topK: 5 } }));
    expect(byText.results).to.deep.equal(byVector.results);
    expect(byText.results[0].id).to.equal('rain');
    expect(byText.metrics.embedMs).to.be.a('number');
    const many = expectOk(
      await api.post('/search-many', { token, body: { queryVectors: [{ text: 'pets at home' }, embedOf('baking'), { text: 'finance news' }], topK: 2 } }),
    );
    const manyByVector = expectOk(
      await api.post('/search-many', { token, body: { queryVectors: [embedOf('pets at home'), embedOf('baking'), embedOf('finance news')], topK: 2 } }),
    );
    expect(many.results).to.deep.equal(manyByVector.results);
    expect(many.results.map((r: { id: string }[]) => r[0].id).slice(1)).to.deep.equal(['bread', 'stocks']);
  });

  it('beside queryText it is hybrid, exactly as with the numeric vector', async () => {
    const token = await textSession();
    const body = { queryText: 'bread dough', fusion: { method: 'linear', alpha: 0.4 }, topK: 5 };
    const byText = expectOk(await api.post('/search', { token, body: { ...body, queryVector: { text: 'something to eat' } } }));
    const byVector = expectOk(await api.post('/search', { token, body: { ...body, queryVector: embedOf('something to eat') } }));
    expect(byText.results).to.deep.equal(byVector.results);
    expect(byText.results[0]).to.include({ id: 'bread' });
    expect(byText.results[0].textRank).to.equal(1);
  });

  it('names the model with "embedding": the first add fixes it; another, or one in a session of given vectors, is 409 EMBEDDING_LOCKED', async () => {
    const token = await api.token();
    const vector = embedOf('x');
    expectOk(await api.post('/vectors/add', { token, body: { id: 'a', vector, embedding: 'use-lite-512' } }));
    expect(expectOk(await api.get('/session', { token })).session.config.embedding).to.equal('use-lite-512');
    expectOk(await api.post('/search', { token, body: { queryVector: { text: 'x' } } }));
    const given = await api.token();
    expectOk(await api.post('/vectors/add', { token: given, body: { id: 'a', vector: [1, 0, 0] } }));
    const error = expectError(
      await api.post('/vectors/add', { token: given, body: { id: 'b', vector: [0, 1, 0], embedding: 'use-lite-512' } }),
      409,
      'EMBEDDING_LOCKED',
    );
    expect(error.details).to.deep.include({ path: '/embedding', actual: 'use-lite-512' });
  });

  it('a model session refuses another dimension or metric (its own codes), and a reset frees it', async () => {
    const token = await textSession();
    expectError(await api.post('/vectors/add', { token, body: { id: 'v', vector: [1, 0] } }), 400, 'DIMENSION_MISMATCH');
    expectError(await api.post('/vectors/add', { token, body: { id: 'v', text: 'hello', metric: 'l2' } }), 409, 'METRIC_LOCKED');
    const fresh = await api.token();
    expectError(await api.post('/vectors/add', { token: fresh, body: { id: 'v', text: 'hello', metric: 'l2' } }), 409, 'METRIC_LOCKED');
    expectError(await api.post('/vectors/add', { token: fresh, body: { id: 'v', text: 'hello', dimensions: 384 } }), 400, 'DIMENSION_MISMATCH');
    expect(expectOk(await api.get('/session', { token: fresh })).session.initialized).to.equal(false);
    expectOk(await api.post('/index/reset', { token }));
    expectOk(await api.post('/vectors/add', { token, body: { id: 'v', vector: [1, 0, 0], metric: 'l2' } }));
    expect(expectOk(await api.get('/session', { token })).session.config).to.include({ dimensions: 3, metric: 'l2', embedding: null });
  });

  it('a text record or a text query in a session of given vectors, or a text query with no model yet: 400 NO_EMBEDDING_MODEL saying how, nothing stored', async () => {
    const token = await api.token();
    const empty = expectError(await api.post('/search', { token, body: { queryVector: { text: 'anything' } } }), 400, 'NO_EMBEDDING_MODEL');
    expect(empty.message).to.match(/add a record with text and no vector/);
    expectOk(await api.post('/vectors/add', { token, body: { id: 'a', vector: embedOf('given by the caller') } }));
    const record = expectError(await api.post('/vectors/add-many', { token, body: { vectors: [{ id: 'b', text: 'by text' }] } }), 400, 'NO_EMBEDDING_MODEL');
    expect(record.message).to.match(/reset the index/);
    expect(record.details).to.deep.equal({ dimensions: 512, embedding: null });
    expectError(await api.post('/search-many', { token, body: { queryVectors: [embedOf('ok'), { text: 'not ok' }] } }), 400, 'NO_EMBEDDING_MODEL');
    expect(expectOk(await api.get('/session', { token })).session.vectorCount).to.equal(1);
  });

  it('refuses a record with neither vector nor text, and an empty query text, with 400 VALIDATION_ERROR at its path', async () => {
    const token = await textSession();
    const error = expectError(
      await api.post('/vectors/add-many', { token, body: { vectors: [{ id: 'x', text: 'fine' }, { id: 'y' }] } }),
      400,
      'VALIDATION_ERROR',
    );
    expect(error.details.issues[0].path).to.equal('/vectors/1/vector');
    expectError(await api.post('/search', { token, body: { queryVector: { text: '' } } }), 400, 'VALIDATION_ERROR');
    expect(expectOk(await api.get('/session', { token })).session.vectorCount).to.equal(DOCS.length);
  });

  it('export and import carry the model: the imported session searches by text as the first', async () => {
    const token = await textSession();
    const exported = await api.get('/vectors/export?vectorEncoding=base64', { token });
    expect(JSON.parse(exported.text.split('\n')[0])).to.include({ embedding: 'use-lite-512', dimensions: 512, metric: 'cosine' });
    const copy = await api.token();
    const headers = { 'content-type': 'application/x-ndjson' };
    expectOk(await api.post('/vectors/import', { token: copy, body: exported.text, headers }));
    expect(expectOk(await api.get('/session', { token: copy })).session.config.embedding).to.equal('use-lite-512');
    const query = { queryVector: { text: 'rain tomorrow' }, topK: 3 };
    expect(expectOk(await api.post('/search', { token: copy, body: query })).results).to.deep.equal(
      expectOk(await api.post('/search', { token, body: query })).results,
    );
    const given = await api.token();
    expectOk(await api.post('/vectors/add', { token: given, body: { id: 'a', vector: embedOf('z') } }));
    expectError(await api.post('/vectors/import', { token: given, body: exported.text, headers }), 409, 'EMBEDDING_LOCKED');
  });

  it('keeps the model over a restart with DATA_DIR (the log records it)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tempvec-embedding-'));
    try {
      let live = await startApp({ dataDir: dir, embeddingThreads: 1 });
      const token = await live.newToken();
      expect((await live.send('POST', '/vectors/add-many', { token, body: { vectors: DOCS } })).status).to.equal(200);
      const before = (await live.send('POST', '/search', { token, body: { queryVector: { text: 'rain tomorrow' } } })).body.results;
      await live.close();
      live = await startApp({ dataDir: dir, embeddingThreads: 1 });
      const after = await live.send('POST', '/search', { token, body: { queryVector: { text: 'rain tomorrow' } } });
      await live.close();
      expect(after.body.session.config.embedding).to.equal('use-lite-512');
      expect(after.body.results).to.deep.equal(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('imports lines by their text: embedded as add-many embeds them, the model fixed; a text line into a session of given vectors is 400', async () => {
    const token = await api.token();
    const header = { format: 'tempvec-export', version: 1, dimensions: null, metric: null, vectorType: 'float32', count: 2 };
    const lines = [header, { id: 'given', vector: embedOf('a given vector') }, { id: 'texted', text: DOCS[0].text }];
    const body = `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
    const headers = { 'content-type': 'application/x-ndjson' };
    expect(expectOk(await api.post('/vectors/import', { token, body, headers })).mutation).to.deep.equal({ added: 2, replaced: 0 });
    const { vector, session } = expectOk(await api.post('/vectors/get', { token, body: { id: 'texted' } }));
    expect(f32(vector.vector)).to.deep.equal(embedOf(DOCS[0].text));
    expect(session.config).to.include({ dimensions: 512, metric: 'cosine', embedding: 'use-lite-512' });
    const given = await api.token();
    expectOk(await api.post('/vectors/add', { token: given, body: { id: 'a', vector: embedOf('z') } }));
    expectError(await api.post('/vectors/import', { token: given, body, headers }), 400, 'NO_EMBEDDING_MODEL');
    expect(expectOk(await api.get('/session', { token: given })).session.vectorCount).to.equal(1);
  });
});
