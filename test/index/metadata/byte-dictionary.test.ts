// ByteDictionary against a plain Map on random adds, removes and lookups,
// across table growths (the old table draining) and key-arena compactions;
// and the work of any one call is bounded, whatever the dictionary holds.
import { expect } from 'chai';
import { ByteDictionary, DRAIN_SLOTS, hashBytes } from '../../../src/index/metadata/byte-dictionary.js';
import { CHUNK_BYTES } from '../../../src/index/metadata/key-arena.js';
import { randomInt, seededRng, type Rng } from '../../helpers/random.js';

const utf8 = new TextEncoder();
const text = new TextDecoder();

/** A random key: mostly short, some long (a few past a chunk). */
function randomKey(rng: Rng, serial: number): string {
  const r = rng();
  const length = r < 0.9 ? randomInt(rng, 24) : r < 0.995 ? randomInt(rng, 4000) : CHUNK_BYTES + randomInt(rng, 5000);
  return `${serial}:` + 'é√x'.repeat(Math.ceil(length / 3)).slice(0, length);
}

class Checked {
  readonly dictionary = new ByteDictionary();
  readonly reference = new Map<string, number>();

  find(key: string): number {
    const bytes = utf8.encode(key);
    // Offset keys: find takes the key where it stands in a larger buffer.
    const padded = new Uint8Array(bytes.length + 3);
    padded.set(bytes, 3);
    return this.dictionary.find(padded, bytes.length, hashBytes(padded, bytes.length, 3), 3);
  }

  add(key: string): void {
    const bytes = utf8.encode(key);
    expect(this.find(key)).to.equal(-1);
    const id = this.dictionary.add(bytes, bytes.length, hashBytes(bytes, bytes.length));
    this.reference.set(key, id);
  }

  remove(key: string): void {
    this.dictionary.remove(this.reference.get(key)!);
    this.reference.delete(key);
  }

  /** Every key held is found with its id and bytes, ids are distinct, sizes agree. */
  checkAll(absent: string[]): void {
    expect(this.dictionary.size).to.equal(this.reference.size);
    const ids = new Set<number>();
    for (const [key, id] of this.reference) {
      expect(this.find(key), key.slice(0, 40)).to.equal(id);
      expect(text.decode(this.dictionary.keyOf(id))).to.equal(key);
      expect(id).to.be.below(this.dictionary.idLimit);
      ids.add(id);
    }
    expect(ids.size).to.equal(this.reference.size);
    for (const key of absent) expect(this.find(key)).to.equal(-1);
    this.checkOrder();
  }

  /** compareKeys and compareKeyTo order keys as their bytes compare (Buffer.compare), from any first byte. */
  checkOrder(): void {
    const held = [...this.reference].slice(0, 300);
    for (let i = 1; i < held.length; i++) {
      const [a, ida] = held[i - 1],
        [b, idb] = held[i];
      const from = Math.min(2, utf8.encode(a).length, utf8.encode(b).length);
      const expected = Math.sign(Buffer.compare(utf8.encode(a).subarray(from), utf8.encode(b).subarray(from)));
      expect(Math.sign(this.dictionary.compareKeys(ida, idb, from)), `${a.slice(0, 20)} ${b.slice(0, 20)}`).to.equal(expected);
      expect(Math.sign(this.dictionary.compareKeyTo(ida, from, utf8.encode(b).subarray(from)))).to.equal(expected);
      expect(this.dictionary.compareKeys(ida, ida, from)).to.equal(0);
    }
  }
}

describe('ByteDictionary', () => {
  it('answers as a Map does through growths, drains and compactions', () => {
    const rng = seededRng(33);
    const d = new Checked();
    const removed: string[] = [];
    let serial = 0;
    for (let round = 0; round < 8; round++) {
      // Grow (several table growths), then churn: removes and adds interleaved, checked as they go.
      const adds = 2000 + randomInt(rng, 4000);
      for (let i = 0; i < adds; i++) d.add(randomKey(rng, serial++));
      const keys = [...d.reference.keys()];
      for (let i = 0; i < keys.length; i++) {
        if (rng() < 0.7) {
          d.remove(keys[i]);
          removed.push(keys[i]);
        }
        if (rng() < 0.2) d.add(randomKey(rng, serial++));
        if (i % 97 === 0) {
          const held = [...d.reference.keys()];
          for (let k = 0; k < 20 && held.length > 0; k++) {
            const key = held[randomInt(rng, held.length)];
            expect(d.find(key)).to.equal(d.reference.get(key));
          }
          expect(d.find(removed[randomInt(rng, removed.length)] ?? 'none')).to.equal(-1);
        }
      }
      d.checkAll(removed.slice(-500));
    }
    expect(d.dictionary.movedSlots, 'tables drained').to.be.above(0);
    expect(d.dictionary.copiedKeyBytes, 'chunks compacted').to.be.above(0);
  });

  it('moves at most DRAIN_SLOTS slots and copies at most a chunk per add or remove', () => {
    const rng = seededRng(34);
    const d = new Checked();
    const held: string[] = [];
    let serial = 0,
      maxMoved = 0,
      maxCopied = 0;
    const step = (op: () => void) => {
      const moved = d.dictionary.movedSlots,
        copied = d.dictionary.copiedKeyBytes;
      op();
      maxMoved = Math.max(maxMoved, d.dictionary.movedSlots - moved);
      maxCopied = Math.max(maxCopied, d.dictionary.copiedKeyBytes - copied);
    };
    for (let i = 0; i < 100_000; i++) {
      const key = `k${serial++}_${'v'.repeat(randomInt(rng, 20))}`;
      step(() => d.add(key));
      held.push(key);
      // Remove most keys again, in random order, so tables grow over tombstones too and chunks empty.
      if (rng() < 0.6) {
        const at = randomInt(rng, held.length);
        const gone = held[at];
        held[at] = held[held.length - 1];
        held.pop();
        step(() => d.remove(gone));
      }
    }
    d.checkAll([]);
    expect(maxMoved).to.be.within(1, DRAIN_SLOTS);
    expect(maxCopied).to.be.within(1, CHUNK_BYTES);
  });
});
