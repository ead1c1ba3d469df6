// hashText64 (src/index/metadata/canonical-json.ts), the key of long values in
// the filter index: the same text the same hash, different texts different
// hashes (odd lengths and a trailing NUL included, which its pairing of units
// would confuse without the length).
import { expect } from 'chai';
import { hashText64 } from '../../../src/index/metadata/canonical-json.js';
import { randomInt, seededRng } from '../../helpers/random.js';

const key = (text: string) => {
  const hash = hashText64(text);
  return `${hash[0]}:${hash[1]}`;
};

describe('hashText64', () => {
  it('gives the same text the same hash and 20,000 different texts 20,000 hashes', () => {
    const rng = seededRng(64);
    const texts = new Set<string>();
    while (texts.size < 20_000) {
      const length = randomInt(rng, 40);
      texts.add(Array.from({ length }, () => String.fromCharCode(randomInt(rng, 4) === 0 ? randomInt(rng, 0x10000) : 97 + randomInt(rng, 3))).join(''));
    }
    const hashes = new Set([...texts].map(key));
    expect(hashes.size).to.equal(texts.size);
    for (const text of [...texts].slice(0, 100)) expect(key(text)).to.equal(key(text.split('').join('')));
  });

  it('tells apart texts that pair their units alike', () => {
    const texts = ['', '\0', 'a', 'a\0', 'a\0\0', '\0a', 'ab', 'ab\0', 'ba'];
    expect(new Set(texts.map(key)).size).to.equal(texts.length);
  });
});
