// Our tokenizer against the model package's: the ids it gave for the
// fixture's texts, and its own Tokenizer (reached through EmbeddingsModel,
// with no model) on random texts over small random vocabularies, whose few
// distinct scores make ties and unknown runs common.
import { EmbeddingsModel } from '@energetic-ai/embeddings';
import { expect } from 'chai';
import fc from 'fast-check';
import { Tokenizer } from '../../src/embedding/tokenizer.js';
import { readVocabulary } from '../../src/embedding/load-node.js';
import { MODEL } from '../../src/embedding/weights.js';
import { emptyTextIds, fixture } from './fixture.js';

const tokenizer = new Tokenizer(readVocabulary());

/** The package's tokenizer over `vocabulary` (EmbeddingsModel only builds it; the model is never called). */
const packageTokenizer = (vocabulary: [string, number][]) =>
  new EmbeddingsModel({ vocabulary, model: null as never }).tokenizer as unknown as { encode(text: string): number[] };

describe('embedding tokenizer', () => {
  it('gives the package ids for every fixture text, cut at 128 tokens', () => {
    for (const { text, ids } of fixture) expect(tokenizer.encode(text), JSON.stringify(text)).to.deep.equal(ids.slice(0, MODEL.maxTokens));
    expect(fixture.some((e) => e.ids.length > MODEL.maxTokens)).to.equal(true);
  });

  it('gives no token for the empty text, like the package', () => {
    expect(tokenizer.encode('')).to.deep.equal([]);
    expect(emptyTextIds).to.deep.equal([]);
  });

  it('keeps the first 128 tokens of a longer text', () => {
    const ids = tokenizer.encode('word '.repeat(300));
    expect(ids).to.have.length(MODEL.maxTokens);
    expect(
      packageTokenizer(readVocabulary() as [string, number][])
        .encode('word '.repeat(300))
        .slice(0, MODEL.maxTokens),
    ).to.deep.equal(ids);
  });

  it('splits like the package on random vocabularies (ties, unknowns, astral symbols)', () => {
    const symbol = fc.constantFrom('a', 'b', 'c', ' ', 'é', '😀', 'ﬁ');
    const piece = fc.array(fc.constantFrom('a', 'b', 'c', '\u2581', 'é', '😀', 'f', 'i'), { minLength: 1, maxLength: 4 }).map((s) => s.join(''));
    const entry = fc.tuple(piece, fc.constantFrom(-1, -2, -2.5, -3, 0));
    const reserved: [string, number][] = ['\ufffd', '<s>', '</s>', 'x1', 'x2', 'x3'].map((p) => [p, 0]);
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 30 }), fc.array(symbol, { maxLength: 40 }), (pieces, text) => {
        const vocabulary = [...reserved, ...pieces];
        const s = text.join('');
        expect(new Tokenizer(vocabulary).encode(s)).to.deep.equal(packageTokenizer(vocabulary).encode(s).slice(0, MODEL.maxTokens));
      }),
      { numRuns: 500, seed: 35 },
    );
  });
});
