// The body reader's base64 vectors go through the kernel's SIMD decoder
// (src/http/body/base64-decoder.ts): a window of the body copied into its memory,
// decoded floats copied out in runs. These tests cross windows and runs,
// mix base64 with number arrays, reuse one Buffer for different bodies (as
// the large-body buffer is reused), and decline bad text at every position
// without leaving anything behind for the next body.
import { expect } from 'chai';
import fc from 'fast-check';
import { SPEC_LIMITS } from '../../../src/config.js';
import { BufferLease, SpareBuffers } from '../../../src/http/body/spare-buffers.js';
import { readVectorBody } from '../../../src/http/body/vector-reader.js';
import { encodeFloat32Base64 } from '../../../src/schemas/base64-float32.js';
import type { CheckedBatch } from '../../../src/schemas/checked-batch.js';
import { randomVector, seededRng, type Rng } from '../../helpers/random.js';

const floats = (rng: Rng, dim: number) => Float32Array.from(randomVector(rng, dim));

/** Each record's vector as its float bits, the rest as is. */
function bitsOf(body: Record<string, unknown> | undefined): unknown {
  if (!body) return body;
  const batch = body.vectors as CheckedBatch;
  return batch.records.map((r) => ({ ...r, vector: Array.from(new Uint32Array(Float32Array.from(r.vector as Float32Array).buffer)) }));
}

/** An add-many body of `count` records with the given dims, each vector base64 or (when `json(i)`) numbers. */
function batch(rng: Rng, count: number, dimOf: (i: number) => number, json: (i: number) => boolean = () => false) {
  const vectors = Array.from({ length: count }, (_, i) => floats(rng, dimOf(i)));
  const text = JSON.stringify({
    vectors: vectors.map((v, i) => ({ id: `v${i}`, vector: json(i) ? Array.from(v) : encodeFloat32Base64(v) })),
  });
  const wanted = vectors.map((v, i) => ({ id: `v${i}`, vector: Array.from(new Uint32Array(v.buffer)) }));
  return { text, wanted };
}

describe('base64 vectors through the kernel decoder (body reader)', () => {
  it('reads a large batch across several body windows and float runs exactly', () => {
    // 3000 x 384: about 6 MB of base64 (windows of 1 MB) and 1.15M floats (runs of 256K).
    const { text, wanted } = batch(seededRng(1), 3000, () => 384);
    const pool = new SpareBuffers();
    for (let round = 0; round < 2; round++) {
      const lease = new BufferLease(pool);
      expect(bitsOf(readVectorBody(Buffer.from(text), lease))).to.deep.equal(wanted);
      lease.release();
    }
  });

  it('reads base64 and number vectors of every size mixed in one batch, padded or not', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.integer(), (count, seed) => {
        const rng = seededRng(seed);
        const dims = Array.from({ length: count }, () => 1 + Math.floor(rng() * (rng() < 0.1 ? SPEC_LIMITS.maxDimensions : 40)));
        const { text, wanted } = batch(
          rng,
          count,
          (i) => dims[i],
          () => rng() < 0.3,
        );
        expect(bitsOf(readVectorBody(Buffer.from(text), new BufferLease(new SpareBuffers())))).to.deep.equal(wanted);
      }),
      { numRuns: 60 },
    );
  });

  it('declines a bad character anywhere in a vector, then reads the next body', () => {
    const rng = seededRng(3);
    const { text, wanted } = batch(rng, 5, () => 23); // 124 characters each: 7 SIMD blocks and a padded tail
    const buffer = Buffer.from(text);
    const second = text.indexOf('"vector":"', text.indexOf('"v1"')) + 10;
    for (let at = 0; at < 124; at++) {
      for (const bad of ['!', '=', '.', ' ', '\u007f']) {
        if (text[second + at] === bad) continue; // the final "=" of the padding
        buffer.write(bad, second + at, 'latin1');
        expect(readVectorBody(buffer), `${JSON.stringify(bad)} at ${at}`).to.equal(undefined);
        buffer.write(text[second + at], second + at, 'latin1');
      }
    }
    // The same Buffer object, other contents: nothing of an earlier body's window or run survives.
    const other = batch(rng, 5, () => 23);
    const reused = Buffer.alloc(Math.max(text.length, other.text.length), 0x20);
    reused.write(text);
    expect(bitsOf(readVectorBody(reused))).to.deep.equal(wanted);
    reused.fill(0x20).write(other.text);
    expect(bitsOf(readVectorBody(reused))).to.deep.equal(other.wanted);
  });

  it('declines a value out of range late in a batch, then reads the next one', () => {
    const rng = seededRng(4);
    const vectors = Array.from({ length: 900 }, () => floats(rng, 384));
    vectors[870][100] = SPEC_LIMITS.maxAbsComponent * 2;
    const text = JSON.stringify({ vectors: vectors.map((v, i) => ({ id: `v${i}`, vector: encodeFloat32Base64(v) })) });
    const pool = new SpareBuffers();
    expect(readVectorBody(Buffer.from(text), new BufferLease(pool))).to.equal(undefined);
    const next = batch(rng, 900, () => 384);
    expect(bitsOf(readVectorBody(Buffer.from(next.text), new BufferLease(pool)))).to.deep.equal(next.wanted);
  });
});
