// Metadata at the published limits is stored and answered byte for byte;
// one byte, key or level past a limit is refused with 400 and nothing of the
// request is stored. The metadata store's bytes go back to the budget when a
// session is reset or expires.
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { REMEMBERED_TOKEN_HEAP_BYTES } from '../../src/sessions/budget-ledger.js';
import { ManualClock } from '../helpers/clock.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';

const defaults = loadConfig({});

/** Metadata of exactly `bytes` UTF-8 bytes as JSON, ending in a multi-byte character. */
function ofBytes(bytes: number): Record<string, unknown> {
  const frame = Buffer.byteLength(JSON.stringify({ text: '' }));
  return { text: 'a'.repeat(bytes - frame - 3) + '中' };
}
const ofKeys = (keys: number) => Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, i % 7]));
function ofDepth(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 'deep' };
  for (let i = 1; i < levels; i++) value = { k: value };
  return value;
}

describe('metadata at the limits (default MAX_METADATA_BYTES, MAX_METADATA_KEYS, MAX_JSON_DEPTH)', () => {
  let live: LiveApp;
  let token: string;
  before(async () => {
    live = await startApp({ requestRatePerSec: 0 });
    token = await live.newToken();
  });
  after(() => live.close());

  const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
    ['MAX_METADATA_BYTES', ofBytes(defaults.maxMetadataBytes), ofBytes(defaults.maxMetadataBytes + 1)],
    ['MAX_METADATA_KEYS', ofKeys(defaults.maxMetadataKeys), ofKeys(defaults.maxMetadataKeys + 1)],
    ['MAX_JSON_DEPTH', ofDepth(defaults.maxJsonDepth), ofDepth(defaults.maxJsonDepth + 1)],
  ];
  for (const [limit, at, past] of cases) {
    it(`stores and answers metadata at ${limit}, through add, add-many and metadata/set`, async () => {
      expect(Buffer.byteLength(JSON.stringify(ofBytes(100)))).to.equal(100);
      const id = `at-${limit}`;
      expect((await live.send('POST', '/vectors/add', { token, body: { id, vector: [1, 2], metadata: at } })).status).to.equal(200);
      expect(
        (await live.send('POST', '/vectors/add-many', { token, body: { vectors: [{ id: id + '-many', vector: [1, 2], metadata: at }] } })).status,
      ).to.equal(200);
      expect((await live.send('POST', '/vectors/metadata/set', { token, body: { id: id + '-many', metadata: at } })).status).to.equal(200);
      for (const stored of [id, id + '-many']) {
        const got = await live.send('POST', '/vectors/metadata/get', { token, body: { id: stored } });
        expect(got.body.metadata).to.deep.equal(at);
      }
      const search = await live.send('POST', '/search', {
        token,
        body: {
          queryVector: [1, 2],
          topK: 100,
          includeMetadata: true,
          filter: { $or: [{ text: { $exists: true } }, { k0: 0 }, { 'k.k': { $exists: true } }] },
        },
      });
      expect(search.body.results.filter((h: { id: string }) => h.id.startsWith(id)).map((h: { metadata: unknown }) => h.metadata)).to.deep.equal([at, at]);
    });

    it(`refuses metadata one past ${limit} with 400 VALIDATION_ERROR, storing nothing`, async () => {
      const before = (await live.send('GET', '/session', { token })).body.stats;
      const id = `past-${limit}`;
      for (const [path, body] of [
        ['/vectors/add', { id, vector: [1, 2], metadata: past }],
        [
          '/vectors/add-many',
          {
            vectors: [
              { id: id + '-ok', vector: [1, 2] },
              { id, vector: [1, 2], metadata: past },
            ],
          },
        ],
        ['/vectors/metadata/set', { id: `at-${limit}`, metadata: past }],
      ] as const) {
        const res = await live.send('POST', path, { token, body });
        expect(res.status, path).to.equal(400);
        expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      }
      const after = (await live.send('GET', '/session', { token })).body.stats;
      expect(after).to.deep.equal(before);
      expect((await live.send('POST', '/vectors/has', { token, body: { id: id + '-ok' } })).body.has).to.equal(false);
      expect((await live.send('POST', '/vectors/metadata/get', { token, body: { id: `at-${limit}` } })).body.metadata).to.deep.equal(at);
    });
  }
});

describe('the metadata store in the memory budget', () => {
  const metadata = (i: number) => ({ text: 'chunk '.repeat(100) + i, source: `doc-${i % 5}`, n: i });
  const vectors = Array.from({ length: 200 }, (_, i) => ({ id: `v${i}`, vector: [1, i + 1], metadata: metadata(i) }));

  it('returns to its start after a reset', async () => {
    const live = await startApp({ requestRatePerSec: 0 });
    try {
      const token = await live.newToken();
      const start = live.store.memoryUsage();
      expect((await live.send('POST', '/vectors/add-many', { token, body: { vectors } })).status).to.equal(200);
      const { stats, serverMemory } = (await live.send('GET', '/session', { token })).body;
      expect(stats.metadataJsonBytes).to.equal(vectors.reduce((sum, v) => sum + Buffer.byteLength(JSON.stringify(v.metadata)), 0));
      expect(stats.metadataBytes).to.be.at.least(stats.metadataJsonBytes);
      expect(serverMemory.metadataBytes).to.equal(stats.metadataBytes);
      expect((await live.send('POST', '/index/reset', { token })).status).to.equal(200);
      const end = live.store.memoryUsage();
      expect(end.metadataBytes).to.equal(start.metadataBytes);
      expect(end.heapBytes).to.equal(start.heapBytes);
    } finally {
      await live.close();
    }
  });

  it('returns to its start after the session expires', async () => {
    const clock = new ManualClock();
    const live = await startApp({ requestRatePerSec: 0, sessionTtlMs: 60_000 }, { now: clock.now });
    try {
      const start = live.store.memoryUsage();
      const token = await live.newToken();
      expect((await live.send('POST', '/vectors/add-many', { token, body: { vectors } })).status).to.equal(200);
      expect(live.store.memoryUsage().metadataBytes).to.be.greaterThan(start.metadataBytes);
      clock.advance(60_001);
      live.store.sweep();
      const end = live.store.memoryUsage();
      expect(end.metadataBytes).to.equal(start.metadataBytes);
      // The expired token's hash is remembered (SESSION_EXPIRED), and counted.
      expect(end.heapBytes).to.equal(start.heapBytes + REMEMBERED_TOKEN_HEAP_BYTES);
      expect(end.linearMemoryBytes).to.equal(start.linearMemoryBytes);
    } finally {
      await live.close();
    }
  });
});
