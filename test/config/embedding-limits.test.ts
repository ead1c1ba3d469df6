// The embedding variables as loadConfig reads them: defaults, the per-token
// cap raised to one whole call, the cap of all tokens derived, bad values refused.
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('embedding configuration', () => {
  it('defaults: 256 texts, 32 KiB a text, 1 MiB a call, 2048 texts in flight per token and 8 times that in all, loaded on first use', () => {
    const config = loadConfig({});
    expect([config.maxEmbedTexts, config.maxEmbedTextBytes, config.maxEmbedBytes]).to.deep.equal([256, 32_768, 1024 * 1024]);
    expect([config.embeddingTextsInFlightPerToken, config.embeddingTextsInFlight, config.embeddingPreload]).to.deep.equal([2048, 8 * 2048, 0]);
  });

  it('raises the per-token cap to a whole add-many or /embed call, so no call is refused for its size alone', () => {
    const config = loadConfig({ EMBEDDING_TEXTS_IN_FLIGHT_PER_TOKEN: '10', MAX_ADD_MANY_BATCH: '500' });
    expect(config.embeddingTextsInFlightPerToken).to.equal(500);
    expect(config.embeddingTextsInFlight).to.equal(500);
  });

  it('refuses EMBEDDING_PRELOAD other than 0 or 1, EMBEDDING_THREADS 0, and MAX_EMBED_BYTES below one text', () => {
    expect(() => loadConfig({ EMBEDDING_PRELOAD: '2' })).to.throw(ConfigError, /EMBEDDING_PRELOAD/);
    expect(() => loadConfig({ EMBEDDING_THREADS: '0' })).to.throw(ConfigError, /EMBEDDING_THREADS/);
    expect(() => loadConfig({ MAX_EMBED_BYTES: '100', MAX_EMBED_TEXT_BYTES: '200' })).to.throw(ConfigError, /MAX_EMBED_BYTES/);
  });
});
