// tempvec/langchain with the server's model: TempvecEmbeddings equals the
// encoder run directly, in requests within the server's /embed limits; a
// TempvecVectorStore given no Embeddings sends documents as text records and
// queries as {text} (one request, no /embed), stores the server's embedding of
// each text, and ranks as a plain cosine over the encoder's vectors.
import { expect } from 'chai';
import { Document } from '@langchain/core/documents';
import { TempvecEmbeddings, TempvecVectorStore } from 'tempvec/langchain';
import { loadTextEmbedder } from '../../src/embedding/load-node.js';
import { useServer } from '../helpers/http.js';

const DIMS = 512;
const DOCS = [
  new Document({ id: 'rain', pageContent: 'It will rain heavily tomorrow afternoon.', metadata: { topic: 'weather' } }),
  new Document({ id: 'sun', pageContent: 'A sunny and warm weekend is expected.', metadata: { topic: 'weather' } }),
  new Document({ id: 'stocks', pageContent: 'Stock markets fell sharply on Monday.', metadata: { topic: 'money' } }),
  new Document({ id: 'rates', pageContent: 'The central bank raised interest rates again.', metadata: { topic: 'money' } }),
  new Document({ id: 'cat', pageContent: 'My cat sleeps on the sofa all day.', metadata: { topic: 'pets' } }),
];

describe('tempvec/langchain with the server embedding (TempvecEmbeddings, a store without Embeddings)', function () {
  this.timeout(60_000);
  // Small /embed limits, so a call of ten texts goes in several requests.
  const api = useServer({ tokenRatePerMin: 0, maxEmbedTexts: 3, maxEmbedTextBytes: 60, maxEmbedBytes: 120, embeddingThreads: 1 });
  const direct = loadTextEmbedder();
  const encode = (texts: string[]) => {
    const flat = direct.embed(texts);
    return texts.map((_t, i) => Array.from(flat.subarray(i * DIMS, (i + 1) * DIMS)));
  };
  const dot = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i], 0);

  /** A client whose /search queries and /embed texts are recorded. */
  function spiedClient() {
    // The client class tempvec/langchain is built with (dist/), made by an Embeddings that is then dropped.
    const { client } = new TempvecEmbeddings({ baseUrl: api.base });
    const seen = { queries: [] as unknown[], embeds: [] as string[][] };
    const search = client.search.bind(client);
    const embed = client.embed.bind(client);
    client.search = ((query: Parameters<typeof search>[0], options?: Parameters<typeof search>[1]) => {
      seen.queries.push(query);
      return search(query, options);
    }) as typeof client.search;
    client.embed = (texts) => {
      seen.embeds.push(texts);
      return embed(texts);
    };
    return { client, seen };
  }

  it('TempvecEmbeddings answers the encoder’s vectors, in requests of at most maxTexts texts and maxBytes bytes', async () => {
    const { client, seen } = spiedClient();
    const embeddings = new TempvecEmbeddings({ client });
    const texts = Array.from({ length: 10 }, (_v, i) => `${'word '.repeat(i + 1)}number ${i}`);
    const vectors = await embeddings.embedDocuments(texts);
    expect(vectors).to.deep.equal(encode(texts));
    expect(seen.embeds.flat()).to.deep.equal(texts);
    for (const batch of seen.embeds) {
      expect(batch.length).to.be.within(1, 3);
      expect(new TextEncoder().encode(batch.join('')).byteLength).to.be.at.most(120);
    }
    expect(await embeddings.embedQuery('a cat on the sofa')).to.deep.equal(encode(['a cat on the sofa'])[0]);
  });

  it('a store given no Embeddings stores each document with the server’s embedding of its text, ids and metadata kept', async () => {
    const { client, seen } = spiedClient();
    const store = await TempvecVectorStore.fromDocuments(DOCS, null, { client });
    expect(seen.embeds).to.deep.equal([]);
    const { vectors } = await client.getMany(DOCS.map((d) => d.id!));
    const expected = encode(DOCS.map((d) => d.pageContent));
    vectors.forEach((stored, i) => {
      expect(stored.id).to.equal(DOCS[i].id);
      // JSON carries the shortest decimals of the stored float32 values.
      expect(Array.from(stored.vector, Math.fround)).to.deep.equal(expected[i]);
      expect(stored.metadata).to.deep.equal(DOCS[i].metadata);
    });
    expect((await client.getSession()).session.config.embedding).to.equal('use-lite-512');
    expect(store.serverEmbeds).to.equal(true);
  });

  it('similaritySearch sends {text} in one request and ranks as a plain cosine over the encoder’s vectors', async () => {
    const { client, seen } = spiedClient();
    const store = await TempvecVectorStore.fromDocuments(DOCS, null, { client });
    const docVectors = encode(DOCS.map((d) => d.pageContent));
    for (const query of ['Will it be wet tomorrow?', 'the economy and banks', 'a pet asleep']) {
      seen.queries = [];
      const hits = await store.similaritySearchWithScore(query, DOCS.length);
      expect(seen.queries).to.deep.equal([{ text: query }]);
      const q = encode([query])[0];
      const reference = DOCS.map((d, i) => ({ id: d.id, score: dot(q, docVectors[i]) })).sort((a, b) => b.score - a.score);
      expect(hits.map(([d]) => d.id)).to.deep.equal(reference.map((r) => r.id));
      hits.forEach(([doc, score], i) => {
        expect(score).to.be.closeTo(reference[i].score, 1e-5);
        expect(doc.pageContent).to.equal(DOCS.find((d) => d.id === doc.id)!.pageContent);
      });
    }
    expect(seen.embeds).to.deep.equal([]);
    const filtered = await store.similaritySearch('Will it be wet tomorrow?', 5, { topic: 'money' });
    expect(filtered.map((d) => d.metadata.topic)).to.deep.equal(['money', 'money']);
  });

  it('hybrid search, MMR and a retriever work with no Embeddings given', async () => {
    const { client } = spiedClient();
    const store = await TempvecVectorStore.fromTexts(
      DOCS.map((d) => d.pageContent),
      DOCS.map((d) => d.metadata),
      null,
      { client },
    );
    const hybrid = await store.hybridSearchWithScore('rain tomorrow', 3);
    const plain = await client.search({ text: 'rain tomorrow' }, { topK: 3, text: 'rain tomorrow' });
    expect(hybrid.map(([d, score]) => [d.id, score])).to.deep.equal(plain.results.map((h) => [h.id, h.score]));
    const mmr = await store.maxMarginalRelevanceSearch('weather forecast', { k: 2, fetchK: 5, lambda: 1 });
    const top = await store.similaritySearch('weather forecast', 2);
    expect(mmr.map((d) => d.pageContent)).to.deep.equal(top.map((d) => d.pageContent));
    const docs = await store.asRetriever({ k: 1 }).invoke('My cat is asleep');
    expect(docs.map((d) => d.pageContent)).to.deep.equal([DOCS[4].pageContent]);
  });
});
