// A token bucket: holds up to `burst` tokens, refilled continuously at
// `ratePerSec`; each request takes one. It allows short bursts and a steady
// average rate, and needs no timer: the refill is computed from the clock
// when a request arrives.

export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    readonly ratePerSec: number,
    readonly burst: number,
    now: number,
  ) {
    if (!(ratePerSec > 0) || !(burst >= 1)) throw new RangeError('a token bucket needs ratePerSec > 0 and burst >= 1');
    this.tokens = burst;
    this.updatedAt = now;
  }

  /** Take one token: 0 when granted, else the milliseconds until one is available. */
  take(now: number): number {
    this.refill(now);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.tokens) * 1000) / this.ratePerSec);
  }

  /** Whole tokens left, as of the last take(). */
  get remaining(): number {
    return Math.floor(this.tokens);
  }

  /** Milliseconds until the bucket is full again, as of the last take(). */
  get msUntilFull(): number {
    return ((this.burst - this.tokens) * 1000) / this.ratePerSec;
  }

  /** True when the bucket is full again, so forgetting it changes nothing. */
  isFull(now: number): boolean {
    this.refill(now);
    return this.tokens >= this.burst;
  }

  private refill(now: number): void {
    // A clock that steps back (NTP) must not drain or overfill the bucket.
    const elapsed = Math.max(0, now - this.updatedAt);
    this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.ratePerSec) / 1000);
    this.updatedAt = Math.max(this.updatedAt, now);
  }
}

/**
 * One bucket per key (a client address). Full buckets are forgotten on a
 * sweep, so the map holds only keys that were busy recently.
 */
export class KeyedBuckets<K> {
  private readonly buckets = new Map<K, TokenBucket>();
  private nextSweep = 0;

  constructor(
    private readonly ratePerSec: number,
    private readonly burst: number,
  ) {}

  get size(): number {
    return this.buckets.size;
  }

  take(key: K, now: number): number {
    return this.bucketOf(key, now).take(now);
  }

  /** The key's bucket (a full one when the key is new). */
  bucketOf(key: K, now: number): TokenBucket {
    this.sweep(now);
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = new TokenBucket(this.ratePerSec, this.burst, now);
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  /** At most once per refill period: drop buckets that are full again. */
  private sweep(now: number): void {
    if (now < this.nextSweep) return;
    this.nextSweep = now + (this.burst * 1000) / this.ratePerSec;
    for (const [key, bucket] of this.buckets) if (bucket.isFull(now)) this.buckets.delete(key);
  }
}
