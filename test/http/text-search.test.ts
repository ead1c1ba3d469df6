// Text on vectors, keyword search (BM25) and hybrid search over HTTP: what
// each route takes and answers, the fusion as documented (recomputed here
// from the ranks and scores each hit reports), and the errors, with nothing
// of a refused request stored.
import { expect } from 'chai';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { sessionOf, sessionWith } from './fixtures.js';

const DOCS = [
  { id: 'apple', vector: [1, 0, 0], text: 'Apples are crisp red fruit from orchards.', metadata: { kind: 'fruit' } },
  { id: 'banana', vector: [0.9, 0.1, 0], text: 'Bananas are long yellow fruit; a banana is sweet.', metadata: { kind: 'fruit' } },
  { id: 'rust', vector: [0, 1, 0], text: 'Rust is a language for systems, with ownership.', metadata: { kind: 'code' } },
  { id: 'go', vector: [0, 0.9, 0.1], text: 'Go is a compiled language with goroutines.', metadata: { kind: 'code' } },
  { id: 'none', vector: [0, 0, 1], metadata: { kind: 'other' } },
];

describe('text, keyword and hybrid search', () => {
  const api = useServer();
  const ids = (body: any) => body.results.map((h: { id: string }) => h.id);

  it('stores text with a vector and returns it only when asked (get, get-many, list, search)', async () => {
    const token = await sessionWith(api, DOCS);
    expect(expectOk(await api.post('/vectors/get', { token, body: { id: 'rust' } })).vector).to.not.have.property('text');
    expect(expectOk(await api.post('/vectors/get', { token, body: { id: 'rust', includeText: true } })).vector.text).to.equal(DOCS[2].text);
    const many = expectOk(await api.post('/vectors/get-many', { token, body: { ids: ['go', 'none'], includeText: true } }));
    expect(many.vectors.map((v: any) => v.text)).to.deep.equal([DOCS[3].text, null]);
    const page = expectOk(await api.post('/vectors/list', { token, body: { includeText: true, limit: 2 } }));
    expect(page.vectors.map((v: any) => v.text)).to.deep.equal([DOCS[0].text, DOCS[1].text]);
    const hit = expectOk(await api.post('/search', { token, body: { queryVector: [0, 0, 1], topK: 1, includeText: true } })).results[0];
    expect(hit).to.deep.equal({ id: 'none', score: 1, text: null });
    const session = await sessionOf(api, token);
    expect(session.config.analyzer).to.equal('standard');
    const { stats } = expectOk(await api.get('/session', { token }));
    expect(stats.textBytes).to.be.above(0);
    expect(stats.textIndexTerms).to.be.above(10);
  });

  it('ranks by BM25 alone with queryText: only texts holding a term, filters first, ties by insertion', async () => {
    const token = await sessionWith(api, DOCS);
    const fruit = expectOk(await api.post('/search', { token, body: { queryText: 'banana FRUIT' } }));
    expect(ids(fruit)).to.deep.equal(['banana', 'apple']);
    expect(fruit.stats.textMatched).to.equal(2);
    expect(fruit.results[0].score).to.be.above(fruit.results[1].score);
    const filtered = expectOk(await api.post('/search', { token, body: { queryText: 'language fruit', filter: { kind: 'code' } } }));
    expect(ids(filtered)).to.have.members(['rust', 'go']);
    expect(filtered.stats.textMatched).to.equal(2);
    const tie = await sessionWith(api, [
      { id: 'x', vector: [1, 0], text: 'same words' },
      { id: 'y', vector: [0, 1], text: 'same words' },
    ]);
    const tied = expectOk(await api.post('/search', { token: tie, body: { queryText: 'words' } }));
    expect(ids(tied)).to.deep.equal(['x', 'y']);
    expect(tied.results[0].score).to.equal(tied.results[1].score);
    const cut = expectOk(await api.post('/search', { token, body: { queryText: 'banana fruit', scoreThreshold: fruit.results[0].score } }));
    expect(ids(cut)).to.deep.equal(['banana']);
    expect(ids(expectOk(await api.post('/search', { token, body: { queryText: 'zebra' } })))).to.deep.equal([]);
  });

  it('fuses both arms by reciprocal rank (k 60 by default) or linearly, reporting each arm', async () => {
    const token = await sessionWith(api, DOCS);
    const rrf = expectOk(await api.post('/search', { token, body: { queryVector: [0, 1, 0], queryText: 'fruit', topK: 5 } }));
    for (const hit of rrf.results) {
      const expected = (hit.vectorRank ? 1 / (60 + hit.vectorRank) : 0) + (hit.textRank ? 1 / (60 + hit.textRank) : 0);
      expect(hit.score).to.be.closeTo(expected, 1e-12);
      expect(hit).to.have.all.keys('id', 'score', 'vectorScore', 'vectorRank', 'textScore', 'textRank');
    }
    expect(rrf.results.find((h: any) => h.id === 'none').textRank).to.equal(null);
    const scores = rrf.results.map((h: any) => h.score);
    expect(scores).to.deep.equal([...scores].sort((a: number, b: number) => b - a));
    const k1 = expectOk(await api.post('/search', { token, body: { queryVector: [0, 1, 0], queryText: 'fruit', fusion: { method: 'rrf', k: 1 } } }));
    expect(k1.results[0].score).to.be.closeTo(1 / (1 + k1.results[0].vectorRank) + (k1.results[0].textRank ? 1 / (1 + k1.results[0].textRank) : 0), 1e-12);
    const vectorOnly = expectOk(
      await api.post('/search', { token, body: { queryVector: [0, 1, 0], queryText: 'fruit', fusion: { method: 'linear', alpha: 1 } } }),
    );
    const plain = expectOk(await api.post('/search', { token, body: { queryVector: [0, 1, 0] } }));
    expect(ids(vectorOnly)).to.deep.equal(ids(plain));
    const textOnly = expectOk(
      await api.post('/search', { token, body: { queryVector: [0, 1, 0], queryText: 'fruit', fusion: { method: 'linear', alpha: 0 }, topK: 2 } }),
    );
    expect(ids(textOnly)).to.deep.equal(['apple', 'banana']);
    const byId = expectOk(await api.post('/search', { token, body: { queryId: 'rust', queryText: 'language' } }));
    expect(ids(byId)[0]).to.equal('go');
    expect(ids(byId)).to.not.include('rust');
  });

  it('takes queryTexts in search-many, alone or one per query vector', async () => {
    const token = await sessionWith(api, DOCS);
    const alone = expectOk(await api.post('/search-many', { token, body: { queryTexts: ['banana', 'language'] } }));
    // Go's text is the shorter: BM25 ranks it first.
    expect(alone.results.map((list: any[]) => list.map((h) => h.id))).to.deep.equal([['banana'], ['go', 'rust']]);
    const single = expectOk(await api.post('/search', { token, body: { queryVector: [1, 0, 0], queryText: 'language' } }));
    const many = expectOk(
      await api.post('/search-many', {
        token,
        body: {
          queryVectors: [
            [0, 1, 0],
            [1, 0, 0],
          ],
          queryTexts: ['fruit', 'language'],
        },
      }),
    );
    expect(many.results[1]).to.deep.equal(single.results);
    const mismatch = expectError(
      await api.post('/search-many', { token, body: { queryVectors: [[1, 0, 0]], queryTexts: ['a', 'b'] } }),
      400,
      'VALIDATION_ERROR',
    );
    expect(mismatch.details.issues[0].path).to.equal('/queryTexts');
  });

  it('refuses bad text and queries with their codes, storing nothing', async () => {
    const token = await sessionWith(api, DOCS.slice(0, 2));
    const empty = expectError(await api.post('/search', { token, body: { queryText: ' ,. ' } }), 400, 'QUERY_TEXT_EMPTY');
    expect(empty.details.path).to.equal('/queryText');
    expect(empty.message).to.match(/term/);
    expect(expectError(await api.post('/search-many', { token, body: { queryTexts: ['fruit', '!!'] } }), 400, 'QUERY_TEXT_EMPTY').details.path).to.equal(
      '/queryTexts/1',
    );
    const fusion = expectError(await api.post('/search', { token, body: { queryText: 'fruit', fusion: { method: 'rrf' } } }), 400, 'VALIDATION_ERROR');
    expect(fusion.details.issues[0].path).to.equal('/fusion');
    const big = 'x'.repeat(32 * 1024 + 1);
    const tooLong = expectError(
      await api.post('/vectors/add-many', {
        token,
        body: {
          vectors: [
            { id: 'ok', vector: [1, 1, 1] },
            { id: 'big', vector: [1, 0, 1], text: big },
          ],
        },
      }),
      400,
      'VALIDATION_ERROR',
    );
    expect(tooLong.details.issues[0].path).to.equal('/vectors/1/text');
    expect(
      expectError(await api.post('/vectors/add', { token, body: { id: 'n', vector: [1, 1, 0], text: 42 } }), 400, 'VALIDATION_ERROR').details.issues[0].path,
    ).to.equal('/text');
    const locked = expectError(
      await api.post('/vectors/add', { token, body: { id: 'e', vector: [1, 1, 0], text: 'the end', analyzer: 'english' } }),
      409,
      'ANALYZER_LOCKED',
    );
    expect(locked.details).to.include({ expected: 'standard', actual: 'english' });
    expect(expectOk(await api.post('/vectors/count', { token, body: {} })).count).to.equal(2);
    expect(ids(expectOk(await api.post('/search', { token, body: { queryText: 'end' } })))).to.deep.equal([]);
  });

  it('takes query texts up to maxQueryTextBytesPerRequest in all and refuses one byte more, naming it', async () => {
    const token = await sessionWith(api, DOCS);
    const { limits } = expectOk(await api.get('/limits'));
    const cap = limits.text.maxQueryTextBytesPerRequest;
    expect(cap).to.equal(64 * 1024);
    const perText = limits.text.maxQueryTextBytes;
    // Cyrillic (2 bytes a character) and a Latin word, each text exactly perText bytes.
    const words = Math.floor((perText - 5) / 13);
    const full = 'яблоко '.repeat(words) + ' '.repeat(perText - 5 - 13 * words) + 'fruit';
    expect(Buffer.byteLength(full)).to.equal(perText);
    const texts = Array.from({ length: cap / perText }, () => full);
    const ok = expectOk(await api.post('/search-many', { token, body: { queryTexts: texts, topK: 2 } }));
    expect(ok.results).to.have.length(texts.length);
    expect(ids({ results: ok.results[0] })).to.deep.equal(['apple', 'banana']);
    const over = expectError(await api.post('/search-many', { token, body: { queryTexts: [...texts, 'a'], topK: 2 } }), 400, 'VALIDATION_ERROR');
    expect(over.details.issues[0].path).to.equal('/queryTexts');
    expect(over.message).to.include('maxQueryTextBytesPerRequest');
  });

  describe('an analyzer changed between an add-many analysing its texts and its turn', () => {
    const batch = Array.from({ length: 300 }, (_, i) => ({ id: `r${i}`, vector: [1, i % 7, 2], text: `running dogs number ${i}` }));
    /** Runs `race` (another request) after add-many's texts are analysed, before its turn; records what each turn's plan was given. */
    function raceBeforeTurn(race: (round: number) => Promise<void>) {
      const store = api.store;
      const encode = store.encodeUpsert.bind(store);
      let round = 0;
      const turns: { prepared: string | undefined; session: string | null }[] = [];
      store.encodeUpsert = async (session, records, options) => {
        if (records.length === batch.length) {
          await race(++round);
          if (!session.index.getConfig().analyzer) return encode(session, records, options);
          const prepare = session.index.prepareUpsert.bind(session.index);
          session.index.prepareUpsert = (recs, opts) => {
            turns.push({ prepared: opts?.preparedTexts?.analyzer, session: session.index.getConfig().analyzer });
            return prepare(recs, opts);
          };
        }
        return encode(session, records, options);
      };
      return { turns, restore: () => Object.assign(store, { encodeUpsert: encode }) };
    }

    it('analyses the batch again in slices, outside the turn, and writes it with the analyzer now fixed', async () => {
      const token = await api.token();
      const spy = raceBeforeTurn(async (round) => {
        if (round === 1) expectOk(await api.post('/vectors/add', { token, body: { id: 'first', vector: [1, 1, 1], text: 'runs', analyzer: 'english' } }));
      });
      try {
        const added = expectOk(await api.post('/vectors/add-many', { token, body: { vectors: batch } }));
        expect(added.mutation).to.deep.equal({ added: 300, replaced: 0 });
      } finally {
        spy.restore();
      }
      // The turn that wrote got texts analysed with english; none analysed in the turn (its analyzer was the session's).
      expect(spy.turns.at(-1)).to.deep.equal({ prepared: 'english', session: 'english' });
      expect(spy.turns.every((turn) => turn.prepared === turn.session)).to.equal(true);
      // Stemmed by english: "running" is "run", so every text matches.
      expect(expectOk(await api.post('/search', { token, body: { queryText: 'run' } })).stats.textMatched).to.equal(301);
    });

    it('answers 409 ANALYZER_CHANGED when it changed before each of three turns, storing nothing of the batch', async () => {
      const token = await api.token();
      const spy = raceBeforeTurn(async (round) => {
        expectOk(await api.post('/index/reset', { token }));
        const analyzer = round % 2 ? 'english' : 'standard';
        expectOk(await api.post('/vectors/add', { token, body: { id: `first${round}`, vector: [1, 1, 1], text: 'runs', analyzer } }));
      });
      try {
        const refused = expectError(await api.post('/vectors/add-many', { token, body: { vectors: batch } }), 409, 'ANALYZER_CHANGED');
        expect(refused.details).to.include({ analyses: 3 });
      } finally {
        spy.restore();
      }
      expect(expectOk(await api.post('/vectors/count', { token, body: {} })).count).to.equal(1);
    });
  });

  it('fixes the analyzer with the first add that carries text, until a reset', async () => {
    const token = await sessionWith(api, [{ id: 'v', vector: [1, 0] }]);
    expect((await sessionOf(api, token)).config.analyzer).to.equal(null);
    expectOk(await api.post('/vectors/add', { token, body: { id: 't', vector: [0, 1], text: 'Running runners ran', analyzer: 'english' } }));
    expect((await sessionOf(api, token)).config.analyzer).to.equal('english');
    expect(ids(expectOk(await api.post('/search', { token, body: { queryText: 'run' } })))).to.deep.equal(['t']);
    expect(expectError(await api.post('/search', { token, body: { queryText: 'the and of' } }), 400, 'QUERY_TEXT_EMPTY').message).to.match(/stop words/);
    expectOk(await api.post('/vectors/clear', { token }));
    expect((await sessionOf(api, token)).config.analyzer).to.equal('english');
    expectOk(await api.post('/index/reset', { token }));
    expect((await sessionOf(api, token)).config.analyzer).to.equal(null);
    expectOk(await api.post('/vectors/add', { token, body: { id: 't', vector: [0, 1], text: 'Running', analyzer: 'standard' } }));
    // Named without text, it is fixed all the same.
    const named = await sessionWith(api, [{ id: 'v', vector: [1, 0] }], { analyzer: 'english' });
    expect((await sessionOf(api, named)).config.analyzer).to.equal('english');
    expectError(await api.post('/vectors/add', { token: named, body: { id: 't', vector: [0, 1], text: 'x', analyzer: 'standard' } }), 409, 'ANALYZER_LOCKED');
  });

  it('exports and imports text and the analyzer', async () => {
    const token = await sessionWith(api, DOCS, { analyzer: 'english' });
    const exported = await api.get('/vectors/export', { token });
    const lines = exported.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines[0].analyzer).to.equal('english');
    expect(lines[1].text).to.equal(DOCS[0].text);
    expect(lines[5]).to.not.have.property('text');
    const copy = await api.token();
    expectOk(await api.post('/vectors/import', { token: copy, body: exported.text, headers: { 'content-type': 'application/x-ndjson' } }));
    expect((await sessionOf(api, copy)).config.analyzer).to.equal('english');
    const query = { queryText: 'fruit language', queryVector: [0.5, 0.5, 0] };
    expect(expectOk(await api.post('/search', { token: copy, body: query })).results).to.deep.equal(
      expectOk(await api.post('/search', { token, body: query })).results,
    );
  });
});
