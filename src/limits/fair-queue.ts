// Work queued per owner and taken round-robin across owners: the next item
// is the first owner's, which then goes to the back of the line. The kernel
// pool serves its jobs by this rule (per instance); the embedding pool by it
// per token, so an owner with many items delays another by one item a turn.

export class FairQueue<T> {
  /** Items waiting, per owner; the Map's order is the round-robin order. */
  private readonly queues = new Map<string, T[]>();
  private count = 0;

  get length(): number {
    return this.count;
  }

  push(owner: string, item: T): void {
    let queue = this.queues.get(owner);
    if (!queue) {
      queue = [];
      this.queues.set(owner, queue);
    }
    queue.push(item);
    this.count++;
  }

  /** The first owner's next item; that owner then goes to the back of the line. */
  next(): T | undefined {
    for (const [owner, queue] of this.queues) {
      this.queues.delete(owner);
      const item = queue.shift();
      if (queue.length > 0) this.queues.set(owner, queue);
      if (item !== undefined) {
        this.count--;
        return item;
      }
    }
    return undefined;
  }
}
