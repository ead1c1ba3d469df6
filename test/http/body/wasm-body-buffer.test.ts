// Large vector bodies read into a WasmBodyBuffer (src/http/body/wasm-body-buffer.ts)
// have their base64 vectors decoded in place. Whatever the body, the reader
// must give exactly what it gives for the same bytes in an ordinary buffer
// (the windowed decoder), decline exactly the same bodies, and read the next
// body in the same space without anything of the earlier one.
import { expect } from 'chai';
import fc from 'fast-check';
import { SPEC_LIMITS } from '../../../src/config.js';
import { BufferLease, SpareBuffers } from '../../../src/http/body/spare-buffers.js';
import { WasmBodyBuffer } from '../../../src/http/body/wasm-body-buffer.js';
import { readVectorBody } from '../../../src/http/body/vector-reader.js';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { encodeFloat32Base64 } from '../../../src/schemas/base64-float32.js';
import type { CheckedBatch } from '../../../src/schemas/checked-batch.js';
import { randomVector, seededRng, type Rng } from '../../helpers/random.js';

/** An add-many body of `count` records of the given dims, each vector base64 or (when `json(i)`) numbers. */
function batchText(rng: Rng, count: number, dimOf: (i: number) => number, json: (i: number) => boolean = () => false): string {
  return JSON.stringify({
    vectors: Array.from({ length: count }, (_, i) => {
      const v = Float32Array.from(randomVector(rng, dimOf(i)));
      return { id: `v${i}`, vector: json(i) ? Array.from(v) : encodeFloat32Base64(v) };
    }),
  });
}

/** Each record's vector as its float bits (and whether it is a view of `space`), the rest as is. */
function bitsOf(body: Record<string, unknown> | undefined) {
  if (!body) return body;
  return (body.vectors as CheckedBatch).records.map((r) => ({ id: r.id, vector: Array.from(new Uint32Array(Float32Array.from(r.vector).buffer)) }));
}

/** The body parsed from a space (as read.ts reads a large vector body) and from an ordinary buffer. */
function bothWays(space: WasmBodyBuffer, text: string) {
  const bytes = space.open(Buffer.byteLength(text));
  bytes.write(text, 'latin1');
  const pool = new SpareBuffers();
  const inPlace = readVectorBody(bytes, new BufferLease(pool), space);
  const windowed = readVectorBody(Buffer.from(text, 'latin1'), new BufferLease(new SpareBuffers()));
  return { inPlace, windowed };
}

const module = loadKernelModule();

describe('WasmBodyBuffer: base64 vectors decoded in place', () => {
  it('reads base64 and number vectors as an ordinary buffer, base64 in place', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer(), (count, seed) => {
        const rng = seededRng(seed);
        const dims = Array.from({ length: count }, () => 1 + Math.floor(rng() * (rng() < 0.1 ? SPEC_LIMITS.maxDimensions : 40)));
        const json = Array.from({ length: count }, () => rng() < 0.3);
        const text = batchText(
          rng,
          count,
          (i) => dims[i],
          (i) => json[i],
        );
        const space = new WasmBodyBuffer(module, WasmBodyBuffer.bytesFor(text.length));
        const { inPlace, windowed } = bothWays(space, text);
        expect(bitsOf(inPlace)).to.deep.equal(bitsOf(windowed));
        const { records } = inPlace!.vectors as CheckedBatch;
        records.forEach((r, i) => {
          expect(r.vector.buffer === space.memory.buffer, `record ${i}`).to.equal(!json[i]);
        });
      }),
      { numRuns: 50 },
    );
  });

  it('decodes what does not fit with the windowed decoder, same result', () => {
    const text = batchText(seededRng(2), 50, () => 96);
    // Room for the body and 300 floats: three vectors in place, the rest elsewhere.
    const space = new WasmBodyBuffer(module, Math.ceil(text.length / 16) * 16 + 300 * 4);
    const { inPlace, windowed } = bothWays(space, text);
    expect(bitsOf(inPlace)).to.deep.equal(bitsOf(windowed));
    const placed = (inPlace!.vectors as CheckedBatch).records.filter((r) => r.vector.buffer === space.memory.buffer);
    expect(placed).to.have.length(3);
  });

  it('declines what an ordinary buffer declines, then reads the next body', () => {
    const rng = seededRng(3);
    const good = batchText(rng, 30, () => 384);
    const space = new WasmBodyBuffer(module, WasmBodyBuffer.bytesFor(good.length));
    const at = good.indexOf('"vector":"', good.indexOf('"v20"')) + 10;
    const bad = [
      good.slice(0, at + 5) + '!' + good.slice(at + 6), // a character outside the alphabet
      good.slice(0, at + 100) + '=' + good.slice(at + 101), // padding inside the text
      good.slice(0, at) + encodeFloat32Base64(Float32Array.of(SPEC_LIMITS.maxAbsComponent * 2, ...new Array(383).fill(0))) + good.slice(at + 2048), // out of range
    ];
    for (const text of bad) {
      const { inPlace, windowed } = bothWays(space, text);
      expect(windowed).to.equal(undefined);
      expect(inPlace).to.equal(undefined);
      const next = bothWays(space, good);
      expect(bitsOf(next.inPlace)).to.deep.equal(bitsOf(next.windowed));
    }
  });

  it('opens any body that fits and refuses a larger one', () => {
    const space = new WasmBodyBuffer(module, WasmBodyBuffer.bytesFor(1000));
    expect(space.byteLength).to.equal(1008 + 187 * 4);
    expect(space.open(1000)).to.have.length(1000);
    expect(space.open(space.byteLength)).to.have.length(space.byteLength);
    expect(() => space.open(space.byteLength + 1)).to.throw(RangeError);
  });
});
