// InsertionOrder against a plain reference that keeps every write forever:
// compactions (on replace, delete and clear) change nothing a reader sees,
// and the log stays within twice the live entries plus the slack.
import { expect } from 'chai';
import { InsertionOrder, LOG_ENTRY_HEAP_BYTES } from '../../src/index/insertion-order.js';
import { stringHeapBytes } from '../../src/index/heap-size.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { randomInt, seededRng } from '../helpers/random.js';

/** Every write kept, never compacted: what the log means. */
class ReferenceOrder {
  readonly current = new Map<string, number>();
  readonly log: [string, number][] = [];
  write(id: string, seq: number) {
    this.current.set(id, seq);
    this.log.push([id, seq]);
  }
  /** Entries with seq in (after, upTo], live ones and those `keep` names. */
  visible(after: number, upTo: number, keep: (seq: number) => boolean = () => false): [string, number][] {
    return this.log.filter(([id, seq]) => seq > after && seq <= upTo && (this.current.get(id) === seq || keep(seq)));
  }
}

function walked(order: InsertionOrder, after: number, upTo: number, keep: (seq: number) => boolean = () => false): [string, number][] {
  const out: [string, number][] = [];
  order.walk(after, upTo, (id, seq) => {
    if (order.seqOf(id) === seq || keep(seq)) out.push([id, seq]);
    return true;
  });
  return out;
}

describe('InsertionOrder', () => {
  it('sees what a log that keeps every write sees, through random replaces, deletes, clears and pinned readers', () => {
    const rng = seededRng(33);
    for (let round = 0; round < 20; round++) {
      const order = new InsertionOrder(randomInt(rng, 8));
      const reference = new ReferenceOrder();
      let seq = 0;
      // A reader keeps a random set of seqs that were live when it pinned (as an export keeps its saved copies).
      let reader: { keeps: Set<number>; unpin: () => void } | null = null;
      for (let step = 0; step < 400; step++) {
        const op = rng();
        const id = `id${randomInt(rng, 30)}`;
        if (op < 0.6) {
          if (reader && reference.current.has(id) && rng() < 0.5) reader.keeps.add(reference.current.get(id)!);
          order.write(id, seq);
          reference.write(id, seq++);
        } else if (op < 0.85) {
          if (reader && reference.current.has(id)) reader.keeps.add(reference.current.get(id)!);
          order.remove(id);
          reference.current.delete(id);
        } else if (op < 0.88) {
          order.clear();
          reference.current.clear();
        } else if (op < 0.94 && !reader) {
          const keeps = new Set<number>();
          reader = { keeps, unpin: order.pin((s) => keeps.has(s)) };
        } else if (reader) {
          reader.unpin();
          reader = null;
        }
        const keep = reader ? (s: number) => reader!.keeps.has(s) : undefined;
        const after = randomInt(rng, seq + 1) - 1;
        expect(walked(order, after, Infinity, keep), `round ${round} step ${step}`).to.deep.equal(reference.visible(after, Infinity, keep));
        for (const [key, value] of reference.current) expect(order.seqOf(key)).to.equal(value);
      }
    }
  });

  it('stays within twice the live entries plus the slack when the same ids are replaced again and again', () => {
    const order = new InsertionOrder(16);
    const ids = Array.from({ length: 100 }, (_, i) => `id-${i}`);
    let seq = 0;
    let most = 0;
    for (let round = 0; round < 200; round++) {
      for (const id of ids) order.write(id, seq++);
      most = Math.max(most, order.heapBytes);
    }
    expect(most).to.be.at.most((ids.length + 16 + 1) * LOG_ENTRY_HEAP_BYTES);
    expect(walked(order, -1, Infinity).map(([id]) => id)).to.deep.equal(ids);
  });

  it('counts the ids only dead entries hold, and lets go of everything once emptied with no reader', () => {
    const order = new InsertionOrder();
    const id = 'x'.repeat(300);
    order.write(id, 0);
    order.write('y', 1);
    order.remove(id);
    expect(order.heapBytes).to.equal(LOG_ENTRY_HEAP_BYTES + stringHeapBytes(id));
    const unpin = order.pin(() => true);
    order.remove('y');
    expect(order.heapBytes).to.be.greaterThan(0);
    unpin();
    expect(order.heapBytes).to.equal(0);
  });
});

describe('VectorIndex insertion order under replace churn', () => {
  it('keeps its counted heap flat while the same ids are replaced, and an export open meanwhile still yields its snapshot', () => {
    const index = new VectorIndex(loadKernelModule(), 2000);
    const batch = (tag: number) => Array.from({ length: 1000 }, (_, i) => ({ id: `${'i'.repeat(200)}${i}`, vector: [i + 1, tag + 1], metadata: { tag } }));
    index.upsert(batch(0));
    const exp = index.openExport();
    const first = exp.next(10);
    let most = 0;
    for (let round = 1; round <= 30; round++) {
      index.upsert(batch(round));
      most = Math.max(most, index.stats().heapBytes);
    }
    const rest = [...first];
    for (let part = exp.next(100); part.length > 0; part = exp.next(100)) rest.push(...part);
    expect(rest.map((v) => v.id)).to.deep.equal(batch(0).map((v) => v.id));
    expect(rest.every((v) => (v.metadata.value() as { tag: number }).tag === 0)).to.equal(true);
    const settled = index.stats().heapBytes;
    for (let round = 31; round <= 60; round++) index.upsert(batch(round));
    // Without compaction on replace, 30 more rounds would add 30,000 dead entries.
    expect(index.stats().heapBytes).to.be.at.most(settled + (1000 + 1024 + 1) * LOG_ENTRY_HEAP_BYTES);
    expect(most).to.be.greaterThan(0);
    expect(index.list({ limit: 2000 }).vectors.map((v) => v.id)).to.deep.equal(batch(0).map((v) => v.id));
  });
});
