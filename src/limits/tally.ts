// Counts of things in flight per key (a token's hash, a client address, a
// session) and in all: what every per-key cap checks against (bodies in
// flight, imports, texts being embedded). A key whose count drops to 0 is
// forgotten, so the map holds only keys with something in flight.

export class Tally<K = string> {
  private readonly byKey = new Map<K, number>();
  private sum = 0;

  /** Everything in flight, over all keys. */
  get total(): number {
    return this.sum;
  }

  /** What `key` has in flight. */
  of(key: K): number {
    return this.byKey.get(key) ?? 0;
  }

  add(key: K, count = 1): void {
    this.byKey.set(key, this.of(key) + count);
    this.sum += count;
  }

  /** `count` of `key`'s are done (never more than it added). */
  remove(key: K, count = 1): void {
    const left = this.of(key) - count;
    if (left > 0) this.byKey.set(key, left);
    else this.byKey.delete(key);
    this.sum -= count;
  }
}
