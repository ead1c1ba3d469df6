// The byte scan before JSON.parse (json-nesting.ts) against the old order:
// parse the whole text, then firstTooDeep. Random JSON text with strings
// full of brackets, quotes and escapes, duplicate keys and integer keys.
import { expect } from 'chai';
import { NestingScan, opensAtMost, prunedIfTooDeep } from '../../src/schemas/json-nesting.js';
import { firstTooDeep } from '../../src/schemas/json-shape.js';
import { randomInt, seededRng, type Rng } from '../helpers/random.js';

const PIECES = ['[', ']', '{', '}', '"', '\\', 'é', '😀', 'a', ' '];

function randomString(rng: Rng): string {
  let s = '';
  for (let n = randomInt(rng, 6); n > 0; n--) s += PIECES[randomInt(rng, PIECES.length)];
  return JSON.stringify(s);
}

/** JSON text up to `levels` deep; objects may repeat a key (JSON.parse keeps the last value, in the first one's place). */
function randomJson(rng: Rng, levels: number): string {
  const kind = levels === 0 ? randomInt(rng, 2) : randomInt(rng, 4);
  if (kind === 0) return String(randomInt(rng, 100));
  if (kind === 1) return randomString(rng);
  const n = randomInt(rng, 4);
  const items = Array.from({ length: n }, () => randomJson(rng, levels - 1 - randomInt(rng, 2)));
  if (kind === 2) return `[ ${items.join(' ,')}]`;
  const keys = ['"a"', '"1"', '"b"', '"0"', randomString(rng)];
  return `{${items.map((item) => `${keys[randomInt(rng, keys.length)]}: ${item}`).join(',')}}`;
}

const bytes = (text: string) => new TextEncoder().encode(text);
const deepest = (value: unknown) => {
  for (let d = 0; ; d++) if (!firstTooDeep(value, d)) return d;
};

describe('json-nesting: the depth read from the bytes', () => {
  it('is an upper bound of the parsed depth, equal without duplicate keys, in one piece or many', () => {
    const rng = seededRng(33);
    for (let i = 0; i < 2000; i++) {
      const text = randomJson(rng, randomInt(rng, 9));
      const all = bytes(text);
      const whole = new NestingScan(0);
      whole.scan(all);
      const pieces = new NestingScan(randomInt(rng, 5));
      for (let at = 0; at < all.length; ) {
        const end = Math.min(all.length, at + 1 + randomInt(rng, 5));
        pieces.scan(all, at, end);
        at = end;
      }
      expect(pieces.deepest, text).to.equal(whole.deepest);
      expect(whole.deepest, text).to.be.at.least(deepest(JSON.parse(text)));
      const plain = JSON.stringify(JSON.parse(text));
      const scanPlain = new NestingScan(0);
      scanPlain.scan(bytes(plain));
      expect(scanPlain.deepest, plain).to.equal(deepest(JSON.parse(plain)));
    }
  });

  it('pruned below the limit, parses to a value that firstTooDeep names at the same path as the whole (or passes as it does)', () => {
    const rng = seededRng(34);
    let refused = 0;
    for (let i = 0; i < 3000; i++) {
      const text = randomJson(rng, 1 + randomInt(rng, 9));
      const maxDepth = randomInt(rng, 6);
      const old = firstTooDeep(JSON.parse(text), maxDepth);
      const pruned = prunedIfTooDeep(bytes(text), maxDepth);
      if (!pruned) {
        expect(old, text).to.equal(null);
        continue;
      }
      // Read in random pieces, the same copy.
      const all = bytes(text);
      const pieces = new NestingScan(maxDepth);
      for (let at = 0; at < all.length; ) {
        const end = Math.min(all.length, at + 1 + randomInt(rng, 5));
        pieces.scan(all, at, end);
        at = end;
      }
      expect(pieces.pruned().equals(pruned), text).to.equal(true);
      const prunedValue = JSON.parse(pruned.toString());
      expect(firstTooDeep(prunedValue, maxDepth), text).to.deep.equal(old);
      // Passing only through a duplicate key: the pruned value is the value.
      if (old === null) expect(prunedValue, text).to.deep.equal(JSON.parse(text));
      else refused++;
    }
    expect(refused).to.be.greaterThan(300);
  });

  it('prunes a million levels to the limit', () => {
    const text = `{"a":${'['.repeat(1e6)}${']'.repeat(1e6)}}`;
    expect(prunedIfTooDeep(bytes(text), 3)!.toString()).to.equal('{"a":[[[]]]}');
    expect(firstTooDeep(JSON.parse('{"a":[[[]]]}'), 3)).to.deep.equal(['a', 0, 0]);
    expect(firstTooDeep(JSON.parse(text), 3)).to.deep.equal(['a', 0, 0]);
  });

  it('settles without a scan only what the scan finds within the limit (opensAtMost), as bytes or as a Buffer', () => {
    const rng = seededRng(21);
    const seen = { settled: 0, scanned: 0 };
    for (let trial = 0; trial < 2000; trial++) {
      const text = bytes(randomJson(rng, randomInt(rng, 6)));
      const limit = randomInt(rng, 8);
      const scan = new NestingScan(limit);
      scan.scan(text);
      const settled = opensAtMost(text, limit);
      expect(opensAtMost(Buffer.from(text), limit)).to.equal(settled);
      if (settled) expect(scan.deepest, new TextDecoder().decode(text)).to.be.at.most(limit);
      seen[settled ? 'settled' : 'scanned']++;
    }
    expect(seen.settled).to.be.greaterThan(100);
    expect(seen.scanned).to.be.greaterThan(100);
  });
});
