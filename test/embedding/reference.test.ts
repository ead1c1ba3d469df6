// The plain forward pass (the encoder's reference) against the model
// package's TF.js vectors: within 1e-6 per component, so it is a reference
// for the model and not only for our kernel.
import { expect } from 'chai';
import { readWeights } from '../../src/embedding/load-node.js';
import { referenceEmbedding } from '../../src/embedding/reference.js';
import { MODEL } from '../../src/embedding/weights.js';
import { fixture, maxAbsDiff } from './fixture.js';

describe('embedding reference', () => {
  const weights = readWeights();

  it('gives the package vectors within 1e-6 per component (1 to 128 tokens)', () => {
    const picked = fixture.filter((_, i) => i % 6 === 0 || i === fixture.length - 1);
    expect(picked.some((e) => e.ids.length > MODEL.maxTokens)).to.equal(true);
    for (const e of picked) expect(maxAbsDiff(referenceEmbedding(e.ids.slice(0, MODEL.maxTokens), weights), e.vector), e.text).to.be.at.most(1e-6);
  });

  it('refuses an empty sequence', () => {
    expect(() => referenceEmbedding([], weights)).to.throw(RangeError);
  });
});
