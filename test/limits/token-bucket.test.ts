import { expect } from 'chai';
import { KeyedBuckets, TokenBucket } from '../../src/limits/token-bucket.js';

describe('TokenBucket', () => {
  it('grants a full burst at once, then refuses with the wait until the next token', () => {
    const bucket = new TokenBucket(10, 20, 0);
    for (let i = 0; i < 20; i++) expect(bucket.take(0), `request ${i}`).to.equal(0);
    expect(bucket.take(0)).to.equal(100); // 10 per second: one every 100 ms
  });

  it('refills at the rate, never above the burst', () => {
    const bucket = new TokenBucket(10, 20, 0);
    for (let i = 0; i < 20; i++) bucket.take(0);
    expect(bucket.take(50)).to.equal(50);
    expect(bucket.take(100)).to.equal(0);
    expect(bucket.take(100)).to.equal(100);
    // An hour idle refills 20, not 36 000.
    let granted = 0;
    while (bucket.take(3_600_000) === 0) granted++;
    expect(granted).to.equal(20);
  });

  it('holds the average rate over a long run of requests', () => {
    const bucket = new TokenBucket(500, 1000, 0);
    let granted = 0;
    for (let t = 0; t < 10_000; t++) for (let i = 0; i < 3; i++) if (bucket.take(t) === 0) granted++;
    // 1000 burst + 500/s over 10 s, within one token.
    expect(granted).to.be.within(5999, 6000);
  });

  it('is not drained or overfilled by a clock that steps back', () => {
    const bucket = new TokenBucket(1, 2, 10_000);
    bucket.take(10_000);
    bucket.take(10_000);
    expect(bucket.take(5_000)).to.be.greaterThan(0);
    expect(bucket.take(11_000)).to.equal(0);
  });

  it('refuses a rate of 0 (callers turn the limit off instead)', () => {
    expect(() => new TokenBucket(0, 1, 0)).to.throw(RangeError);
  });
});

describe('KeyedBuckets', () => {
  it('limits each key on its own', () => {
    const buckets = new KeyedBuckets<string>(1, 2);
    expect(buckets.take('a', 0)).to.equal(0);
    expect(buckets.take('a', 0)).to.equal(0);
    expect(buckets.take('a', 0)).to.equal(1000);
    expect(buckets.take('b', 0)).to.equal(0);
  });

  it('forgets keys whose bucket is full again, so idle addresses cost no memory', () => {
    const buckets = new KeyedBuckets<string>(1, 2);
    for (let i = 0; i < 100; i++) buckets.take(`addr${i}`, 0);
    expect(buckets.size).to.equal(100);
    buckets.take('late', 10_000);
    expect(buckets.size).to.equal(1);
  });
});
