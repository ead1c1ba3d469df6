// The encoder (build/embedding.wasm driven by src/embedding/encoder.ts)
// against the model package's TF.js vectors in the fixture and against the
// plain reference forward pass: within 1e-6 per component, unit length, the
// same bits every time, in any batch and in any instance.
import { expect } from 'chai';
import { BATCH_TOKENS, Encoder } from '../../src/embedding/encoder.js';
import { loadEncoderModule, readWeights } from '../../src/embedding/load-node.js';
import { referenceEmbedding } from '../../src/embedding/reference.js';
import { MODEL } from '../../src/embedding/weights.js';
import { seededRng } from '../helpers/random.js';
import { fixture, maxAbsDiff } from './fixture.js';

const weights = readWeights();
const encoder = new Encoder(loadEncoderModule(), weights);
const sequences = fixture.map((e) => e.ids.slice(0, MODEL.maxTokens));
const d = MODEL.width;
const row = (vectors: Float32Array, i: number) => vectors.subarray(i * d, (i + 1) * d);

describe('embedding encoder', () => {
  const vectors = encoder.encode(sequences);

  it('gives the package vectors within 1e-6 per component for every fixture text', () => {
    let worst = 0;
    fixture.forEach((e, i) => {
      worst = Math.max(worst, maxAbsDiff(row(vectors, i), e.vector));
    });
    expect(worst).to.be.at.most(1e-6);
  });

  it('gives unit vectors', () => {
    for (let i = 0; i < sequences.length; i++) {
      const v = row(vectors, i);
      expect(Math.sqrt(v.reduce((s, x) => s + x * x, 0))).to.be.closeTo(1, 1e-6);
    }
  });

  it('equals the plain reference within 1e-6 per component (short, long, 128 tokens)', () => {
    const picked = [0, 2, 5, 31, 40, 55, 57].map((i) => sequences[i]);
    expect(picked.some((s) => s.length === MODEL.maxTokens)).to.equal(true);
    const ours = encoder.encode(picked);
    picked.forEach((ids, i) => {
      expect(maxAbsDiff(row(ours, i), referenceEmbedding(ids, weights)), `${ids.length} tokens`).to.be.at.most(1e-6);
    });
  });

  it('gives a sequence the same bits alone, in any batch, in another chunk and in another instance', () => {
    const again = encoder.encode([...sequences].reverse());
    const other = new Encoder(loadEncoderModule(), weights);
    expect(sequences.reduce((n, s) => n + s.length, 0)).to.be.above(2 * BATCH_TOKENS);
    for (let i = 0; i < sequences.length; i++) {
      const expected = row(vectors, i);
      expect(row(again, sequences.length - 1 - i)).to.deep.equal(expected);
      expect(encoder.encode([sequences[i]])).to.deep.equal(expected);
      if (i % 10 === 0) expect(other.encode([sequences[i]])).to.deep.equal(expected);
    }
  });

  it('encodes random id sequences of every length like the reference', () => {
    const rng = seededRng(35);
    const picked = [1, 3, 4, 5, 17, 64].map((n) => Array.from({ length: n }, () => Math.floor(rng() * MODEL.vocabSize)));
    const ours = encoder.encode(picked);
    picked.forEach((ids, i) => {
      expect(maxAbsDiff(row(ours, i), referenceEmbedding(ids, weights))).to.be.at.most(1e-6);
    });
  });

  it('refuses an empty sequence, one past 128 tokens and an id outside the vocabulary with RangeError', () => {
    expect(() => encoder.encode([[]])).to.throw(RangeError, /1 to 128 ids, not 0/);
    expect(() => encoder.encode([new Array(MODEL.maxTokens + 1).fill(7)])).to.throw(RangeError, /not 129/);
    expect(() => encoder.encode([[5, MODEL.vocabSize]])).to.throw(RangeError, /outside the vocabulary/);
    expect(() => encoder.encode([[5, -1]])).to.throw(RangeError, /outside the vocabulary/);
    expect(() => encoder.encode([[1.5]])).to.throw(RangeError, /outside the vocabulary/);
    expect(encoder.encode([])).to.have.length(0);
  });
});
