// TempvecVectorStore (tempvec/langchain) against a live server, embedded with
// @langchain/core's SyntheticEmbeddings: rankings and scores equal a plain
// cosine over the same embeddings; ids, text and metadata come back as given;
// filters, delete, MMR, fromTexts and asRetriever. The server and /sdk.js
// must not load @langchain/core.
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { Document } from '@langchain/core/documents';
import { SyntheticEmbeddings } from '@langchain/core/utils/testing';
import { TempvecVectorStore } from 'tempvec/langchain';
import { referenceBm25, referenceFuse } from '../helpers/bm25-reference.js';
import { useServer } from '../helpers/http.js';

const embeddings = new SyntheticEmbeddings({ vectorSize: 16 });
const DOCS = [
  new Document({ id: 'apple', pageContent: 'apples are crisp red or green fruit from trees', metadata: { topic: 'fruit', year: 1990 } }),
  new Document({ id: 'banana', pageContent: 'bananas are long yellow tropical fruit', metadata: { topic: 'fruit', year: 2005 } }),
  new Document({ id: 'cherry', pageContent: 'cherries are small round dark red stone fruit', metadata: { topic: 'fruit', year: 2015 } }),
  new Document({ id: 'rust', pageContent: 'rust is a systems programming language with ownership', metadata: { topic: 'code', year: 2015 } }),
  new Document({ id: 'go', pageContent: 'go is a compiled language with goroutines and channels', metadata: { topic: 'code', year: 2009 } }),
  new Document({
    id: 'wasm',
    pageContent: 'webassembly runs portable binary code in browsers',
    metadata: { topic: 'code', year: 2017, tags: ['web', 'simd'] },
  }),
];

const cosine = (a: number[], b: number[]) => {
  let dot = 0,
    na = 0,
    nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
};

/** The plain reference: every document scored by cosine, best first (ties by insertion). */
async function reference(query: string, docs = DOCS) {
  const q = await embeddings.embedQuery(query);
  const vectors = await embeddings.embedDocuments(docs.map((d) => d.pageContent));
  return docs.map((d, i) => ({ id: d.id!, score: cosine(q, vectors[i]), i })).sort((x, y) => y.score - x.score || x.i - y.i);
}

/** Greedy MMR over every document: relevance to the query minus the most similarity to one already picked. */
async function plainMmr(query: string, docs: Document[], k: number, lambda: number) {
  const q = await embeddings.embedQuery(query);
  const vectors = await embeddings.embedDocuments(docs.map((d) => d.pageContent));
  const picked: number[] = [];
  while (picked.length < k) {
    let best = -1,
      bestScore = -Infinity;
    vectors.forEach((v, i) => {
      if (picked.includes(i)) return;
      const redundancy = Math.max(-Infinity, ...picked.map((j) => cosine(v, vectors[j])));
      const score = lambda * cosine(q, v) - (1 - lambda) * (picked.length ? redundancy : 0);
      if (score > bestScore) {
        best = i;
        bestScore = score;
      }
    });
    picked.push(best);
  }
  return picked.map((i) => docs[i].id);
}

describe('TempvecVectorStore (LangChain.js, tempvec/langchain)', function () {
  this.timeout(60_000);
  const api = useServer({ tokenRatePerMin: 0 });
  const store = () => TempvecVectorStore.fromDocuments(DOCS, embeddings, { baseUrl: api.base });

  it('keeps ids, text and metadata, and ranks as a plain cosine over the embeddings', async () => {
    const vs = await store();
    for (const query of ['red fruit from trees', 'a programming language', DOCS[4].pageContent]) {
      const hits = await vs.similaritySearchWithScore(query, DOCS.length);
      const expected = await reference(query);
      expect(
        hits.map(([d]) => d.id),
        query,
      ).to.deep.equal(expected.map((e) => e.id));
      hits.forEach(([, score], i) => {
        expect(Math.abs(score - expected[i].score)).to.be.below(1e-5);
      });
    }
    const [[top, score]] = await vs.similaritySearchWithScore(DOCS[5].pageContent, 1);
    expect(score).to.be.closeTo(1, 1e-6);
    expect({ id: top.id, pageContent: top.pageContent, metadata: top.metadata }).to.deep.equal({
      id: 'wasm',
      pageContent: DOCS[5].pageContent,
      metadata: DOCS[5].metadata,
    });
  });

  it("filters with tempvec's filter language before ranking", async () => {
    const vs = await store();
    const fruit = await vs.similaritySearch('a programming language', 10, { topic: 'fruit' });
    const expected = (await reference('a programming language')).filter((e) => ['apple', 'banana', 'cherry'].includes(e.id));
    expect(fruit.map((d) => d.id)).to.deep.equal(expected.map((e) => e.id));
    const recent = await vs.similaritySearch('fruit', 10, { $and: [{ year: { $gte: 2009 } }, { $not: { tags: 'simd' } }] });
    expect(recent.map((d) => d.id).sort()).to.deep.equal(['cherry', 'go', 'rust']);
  });

  it('delete({ ids }) removes exactly those documents', async () => {
    const vs = await store();
    await vs.delete({ ids: ['rust', 'go', 'not-there'] });
    const left = await vs.similaritySearch('language', 10);
    expect(left.map((d) => d.id).sort()).to.deep.equal(['apple', 'banana', 'cherry', 'wasm']);
  });

  it('maxMarginalRelevanceSearch picks as a plain MMR and skips a duplicate', async () => {
    const twin = new Document({ id: 'apple-twin', pageContent: DOCS[0].pageContent, metadata: { topic: 'fruit' } });
    const all = [...DOCS, twin];
    const vs = await TempvecVectorStore.fromDocuments(all, embeddings, { baseUrl: api.base });
    // Close to the apple text (cosine 0.98 with SyntheticEmbeddings); go and rust add the most that is new.
    const query = 'apples are crisp red or green fruit from farms';
    const plain = await vs.similaritySearch(query, 2);
    expect(plain.map((d) => d.id).sort()).to.deep.equal(['apple', 'apple-twin']);
    const mmr = (await vs.maxMarginalRelevanceSearch(query, { k: 2, fetchK: 7, lambda: 0.5 })).map((d) => d.id);
    const expected = await plainMmr(query, all, 2, 0.5);
    // go and rust score within 1e-4 of each other here: float32 storage may pick either.
    expect([mmr[0], expected[0]]).to.deep.equal(['apple', 'apple']);
    expect(['go', 'rust']).to.include(mmr[1]).and.include(expected[1]);
    const code = await vs.maxMarginalRelevanceSearch('code', { k: 3, fetchK: 7, filter: { topic: 'code' } });
    expect(code.map((d) => d.metadata.topic)).to.deep.equal(['code', 'code', 'code']);
  });

  it("maxMarginalRelevanceSearch is the server's MMR with diversity = 1 - lambda; asRetriever({ searchType: 'mmr' }) too", async () => {
    const twin = new Document({ id: 'apple-twin', pageContent: DOCS[0].pageContent, metadata: { topic: 'fruit' } });
    const all = [...DOCS, twin];
    const vs = await TempvecVectorStore.fromDocuments(all, embeddings, { baseUrl: api.base });
    const query = 'apples are crisp red or green fruit from farms';
    const vector = await embeddings.embedQuery(query);
    const ids = (docs: { id?: string }[]) => docs.map((d) => d.id);
    for (const lambda of [0, 0.1, 0.5, 0.9, 1]) {
      const mine = ids(await vs.maxMarginalRelevanceSearch(query, { k: 3, fetchK: 7, lambda }));
      const server = await vs.client.search(vector, { topK: 3, mmr: { diversity: 1 - lambda, candidates: 7 } });
      expect(mine, `lambda ${lambda}`).to.deep.equal(ids(server.results));
    }
    // Mostly relevance (lambda 0.9) keeps the twin; as diversity 0.9 it would be skipped: the conversion matters.
    const relevant = ids(await vs.maxMarginalRelevanceSearch(query, { k: 2, fetchK: 7, lambda: 0.9 }));
    expect(relevant).to.deep.equal(await plainMmr(query, all, 2, 0.9));
    expect(relevant).to.deep.equal(['apple', 'apple-twin']);
    const diverse = await vs.client.search(vector, { topK: 2, mmr: { diversity: 0.9, candidates: 7 } });
    expect(ids(diverse.results)[1]).to.not.equal('apple-twin');
    const retriever = vs.asRetriever({ k: 2, searchType: 'mmr', searchKwargs: { fetchK: 7, lambda: 0.9 } });
    expect(ids(await retriever.invoke(query))).to.deep.equal(relevant);
  });

  it('fromTexts stores texts with their metadata under new ids; asRetriever returns documents', async () => {
    const vs = await TempvecVectorStore.fromTexts(['alpha centauri is a star', 'beta decay is radioactive'], [{ n: 1 }, { n: 2 }], embeddings, {
      baseUrl: api.base,
    });
    const docs = await vs.asRetriever({ k: 1 }).invoke('alpha centauri is a star');
    expect(docs).to.have.length(1);
    expect(docs[0].pageContent).to.equal('alpha centauri is a star');
    expect(docs[0].metadata).to.deep.equal({ n: 1 });
    expect(docs[0].id).to.match(/^[0-9a-f-]{36}$/);
    const ids = await vs.addDocuments([new Document({ pageContent: 'gamma rays' })], { ids: ['g'] });
    expect(ids).to.deep.equal(['g']);
    expect((await vs.client.getSession()).session.vectorCount).to.equal(3);
  });

  it("stores pageContent as the vector's text, so a chunk is not held to the metadata limit", async () => {
    const long = 'chunk '.repeat(3000).trim(); // 18 KB: more than MAX_METADATA_BYTES (8 KB)
    const vs = await TempvecVectorStore.fromDocuments([new Document({ id: 'long', pageContent: long, metadata: { page: 1 } })], embeddings, {
      baseUrl: api.base,
    });
    const { vector } = await vs.client.get('long', { includeText: true });
    expect(vector.text).to.equal(long);
    expect(vector.metadata).to.deep.equal({ page: 1 });
    const [doc] = await vs.similaritySearch(long, 1);
    expect(doc.pageContent).to.equal(long);
  });

  it('searches by keywords (BM25) and hybrid (RRF of cosine and BM25), as plain references rank them', async () => {
    const vs = await TempvecVectorStore.fromDocuments(DOCS, embeddings, { baseUrl: api.base, analyzer: 'english' });
    const textDocs = DOCS.map((d, seq) => ({ id: d.id!, text: d.pageContent, seq }));
    const keyword = await vs.keywordSearchWithScore('fruit from trees', 10);
    const bm25 = referenceBm25(textDocs, 'english', 'fruit from trees');
    expect(keyword.map(([d]) => d.id)).to.deep.equal(bm25.map((h) => h.id));
    keyword.forEach(([, score], i) => {
      expect(score).to.be.closeTo(bm25[i].score, 1e-6);
    });
    expect(keyword[0][0].pageContent).to.equal(DOCS.find((d) => d.id === keyword[0][0].id)!.pageContent);
    const query = 'a compiled language with channels';
    const hybrid = await vs.hybridSearchWithScore(query, 4);
    const fused = referenceFuse(await reference(query), referenceBm25(textDocs, 'english', query), { method: 'rrf' }, false, (id) =>
      DOCS.findIndex((d) => d.id === id),
    );
    expect(hybrid.map(([d]) => d.id)).to.deep.equal(fused.slice(0, 4).map((h) => h.id));
    hybrid.forEach(([, score], i) => {
      expect(score).to.be.closeTo(fused[i].score, 1e-12);
    });
    const retrieved = await vs.asHybridRetriever({ k: 2 }).invoke(query);
    expect(retrieved.map((d) => d.id)).to.deep.equal(fused.slice(0, 2).map((h) => h.id));
    const filtered = await vs.asHybridRetriever({ k: 5, filter: { topic: 'fruit' }, fusion: { method: 'linear', alpha: 0.5 } }).invoke(query);
    expect(filtered.map((d) => d.metadata.topic)).to.deep.equal(['fruit', 'fruit', 'fruit']);
    const byKeywords = await vs.asHybridRetriever({ searchType: 'keyword', k: 1 }).invoke('goroutines');
    expect(byKeywords.map((d) => d.id)).to.deep.equal(['go']);
    // Only stop words under the english analyzer: ranked by similarity alone.
    const stopWords = await vs.hybridSearchWithScore('what is it', 3);
    expect(stopWords.map(([d]) => d.id)).to.deep.equal((await reference('what is it')).slice(0, 3).map((e) => e.id));
  });

  it('the server and /sdk.js do not import @langchain/core', () => {
    expect(readFileSync(new URL('../../build/sdk.js', import.meta.url), 'utf8')).to.not.include('@langchain');
    const dist = new URL('../../dist/', import.meta.url);
    const files = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js') && !f.startsWith('langchain'));
    expect(files.length).to.be.above(20);
    for (const file of files) expect(readFileSync(new URL(file, dist), 'utf8'), file).to.not.include('@langchain');
  });
});
