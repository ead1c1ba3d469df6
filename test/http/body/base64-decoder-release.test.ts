// A base64 decoder (src/http/body/base64-decoder.ts) is kept idle between
// parses and outlives every request; it must not keep the last body, or the
// float arrays it decoded into, alive once the body is read or declined (a
// decoder given back is reset). Checked with WeakRefs and a forced GC.
import { expect } from 'chai';
import v8 from 'node:v8';
import vm from 'node:vm';
import { BufferLease, SpareBuffers } from '../../../src/http/body/spare-buffers.js';
import { readVectorBody } from '../../../src/http/body/vector-reader.js';
import { encodeFloat32Base64 } from '../../../src/schemas/base64-float32.js';
import type { CheckedBatch } from '../../../src/schemas/checked-batch.js';
import { randomVector, seededRng } from '../../helpers/random.js';

// A gc() without starting node with --expose-gc: a context made after the
// flag is set has it. The flag goes off again for the rest of the suite.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
v8.setFlagsFromString('--no-expose-gc');

/** A lease that hands out fresh buffers and remembers each one weakly. */
class WatchedLease extends BufferLease {
  readonly buffers: WeakRef<ArrayBuffer>[] = [];
  constructor() {
    super(new SpareBuffers());
  }
  override take(bytes: number): ArrayBuffer {
    const buffer = new ArrayBuffer(bytes);
    this.buffers.push(new WeakRef(buffer));
    return buffer;
  }
}

/** An add-many body of base64 vectors; `bad` puts a character outside the alphabet in vector `bad`. */
function body(count: number, bad = -1): Buffer {
  const rng = seededRng(count + bad);
  const vectors = Array.from({ length: count }, (_, i) => {
    const text = encodeFloat32Base64(Float32Array.from(randomVector(rng, 64)));
    return { id: `v${i}`, vector: i === bad ? '!' + text.slice(1) : text };
  });
  return Buffer.from(JSON.stringify({ vectors }));
}

/**
 * Parse `bytes` (through the decoder: no body space) and drop everything;
 * only weak references to the body and the vectors' buffers are returned.
 */
function parseAndDrop(bytes: Buffer, expectParsed: boolean) {
  const lease = new WatchedLease();
  const parsed = readVectorBody(bytes, lease);
  expect(parsed !== undefined, 'parsed').to.equal(expectParsed);
  if (parsed) expect((parsed.vectors as CheckedBatch).records[0].vector).to.be.instanceOf(Float32Array);
  expect(lease.buffers.length, 'the parser took a buffer for the vectors').to.be.greaterThan(0);
  return { body: new WeakRef(bytes), buffers: lease.buffers };
}

/**
 * Collect after the current job (a WeakRef keeps its target alive until the
 * job that made it ends), in up to five rounds while any of `refs` is still
 * alive: in one full run of the suite (2026-11-23) a single round left the
 * body alive, which the next round would have collected; a body really held
 * stays through every round (the third test).
 */
async function collect(refs: { body: WeakRef<Buffer>; buffers: WeakRef<ArrayBuffer>[] }): Promise<void> {
  for (let round = 0; round < 5; round++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    gc();
    if (refs.body.deref() === undefined && refs.buffers.every((buffer) => buffer.deref() === undefined)) return;
  }
}

describe('base64 decoder: nothing kept after a body', () => {
  it('keeps no body or vector buffer once a base64 body is parsed', async () => {
    // flush() has let go of the vectors' array already; reset() lets go of the body.
    const refs = parseAndDrop(body(40), true);
    await collect(refs);
    expect(refs.body.deref(), 'the body').to.equal(undefined);
    refs.buffers.forEach((buffer, i) => {
      expect(buffer.deref(), `vector buffer ${i}`).to.equal(undefined);
    });
  });

  it('keeps no body or vector buffer once a body is declined half way', async () => {
    // Vectors 0..19 are decoded into the pending run before vector 20 declines the body:
    // no flush, so only reset() lets go of both.
    const refs = parseAndDrop(body(40, 20), false);
    await collect(refs);
    expect(refs.body.deref(), 'the body').to.equal(undefined);
    refs.buffers.forEach((buffer, i) => {
      expect(buffer.deref(), `vector buffer ${i}`).to.equal(undefined);
    });
  });

  it('the check works: a body still referenced is kept, the rest collected', async () => {
    const kept = body(40);
    const refs = parseAndDrop(kept, true);
    await collect(refs);
    expect(refs.body.deref()).to.equal(kept);
  });
});
