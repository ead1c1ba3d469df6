// The spare body and vector buffers reused between requests (src/http/body/spare-buffers.ts).
import { expect } from 'chai';
import { BufferLease, SpareBuffers, MAX_SPARE_BYTES } from '../../../src/http/body/spare-buffers.js';

describe('spare buffers', () => {
  it('hands out a fresh buffer when it holds none large enough', () => {
    const pool = new SpareBuffers();
    const a = pool.take(1024);
    expect(a.byteLength).to.equal(1024);
    pool.give([a]);
    const b = pool.take(4096);
    expect(b).to.not.equal(a);
    expect(b.byteLength).to.equal(4096);
    expect(pool.take(512)).to.equal(a);
  });

  it('reuses the smallest buffer that fits, and each buffer once', () => {
    const pool = new SpareBuffers();
    const small = new ArrayBuffer(1000);
    const large = new ArrayBuffer(10_000);
    pool.give([large, small, small]);
    expect(pool.spareBytes).to.equal(11_000);
    expect(pool.take(900)).to.equal(small);
    expect(pool.take(900)).to.equal(large);
    expect(pool.take(900)).to.not.be.oneOf([small, large]);
    expect(pool.spareBytes).to.equal(0);
  });

  it('keeps no buffer over the size limit, at most 16 MB in all, larger first', () => {
    const pool = new SpareBuffers();
    pool.give([new ArrayBuffer(MAX_SPARE_BYTES + 1)]);
    expect(pool.spareBytes).to.equal(0);
    const sizes = [1, 2, 4, 8, 4].map((mb) => mb * 1024 * 1024);
    pool.give(sizes.map((n) => new ArrayBuffer(n)));
    expect(pool.spareBytes).to.equal((8 + 4 + 4) * 1024 * 1024);
  });

  it('gives back everything a lease took, once', () => {
    const pool = new SpareBuffers();
    const lease = new BufferLease(pool);
    const a = lease.take(100);
    const b = lease.take(200);
    lease.release();
    lease.release();
    expect(pool.spareBytes).to.equal(300);
    expect(pool.take(150)).to.equal(b);
    expect(pool.take(50)).to.equal(a);
  });
});
