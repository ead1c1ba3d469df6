// base64 little-endian float32: exact round trip and strict decoding.
import { expect } from 'chai';
import * as v from 'valibot';
import { BASE64_PATTERN, decodeFloat32Base64, encodeFloat32Base64 } from '../../src/schemas/base64-float32.js';
import { VectorSchema } from '../../src/schemas/vector.js';
import { randomVector, seededRng } from '../helpers/random.js';

describe('base64 float32 vectors', () => {
  it('round-trips every float32 value exactly', () => {
    const rng = seededRng(9);
    for (const dim of [1, 2, 3, 4, 5, 384, 1024]) {
      const values = Float32Array.from(randomVector(rng, dim), (x) => x * 1e6);
      expect(Array.from(decodeFloat32Base64(encodeFloat32Base64(values))!)).to.deep.equal(Array.from(values));
    }
    const special = Float32Array.from([0, -0, 1e-45, 3.4028234663852886e38, -1.5]);
    expect(Array.from(decodeFloat32Base64(encodeFloat32Base64(special))!)).to.deep.equal(Array.from(special));
  });

  it('is little-endian: 1.0 is AACAPw==', () => {
    expect(encodeFloat32Base64([1])).to.equal('AACAPw==');
    expect(Array.from(decodeFloat32Base64('AACAPwAAAEA=')!)).to.deep.equal([1, 2]);
  });

  it('refuses non-base64 text and byte counts that are not a multiple of 4', () => {
    expect(decodeFloat32Base64('AACAPw')).to.equal(null); // unpadded
    expect(decodeFloat32Base64('AAC*Pw==')).to.equal(null);
    expect(decodeFloat32Base64('AACA')).to.equal(null); // 3 bytes
    expect(decodeFloat32Base64('AACAPw==\n')).to.equal(null);
    expect(decodeFloat32Base64('AACA Pw=')).to.equal(null);
    expect(decodeFloat32Base64('AA==AAAA')).to.equal(null);
    expect(decodeFloat32Base64('AACAP===')).to.equal(null);
    expect(decodeFloat32Base64('AAC\u00e9Pw==')).to.equal(null);
    expect(decodeFloat32Base64('====')).to.equal(null);
  });

  it('agrees with the published pattern on random short strings', () => {
    const rng = seededRng(10);
    const alphabet = 'AB+/=_-* ';
    for (let n = 0; n < 5000; n++) {
      const text = Array.from({ length: 4 * (1 + Math.floor(rng() * 3)) }, () => alphabet[Math.floor(rng() * alphabet.length)]).join('');
      const decoded = decodeFloat32Base64(text);
      const byPattern = BASE64_PATTERN.test(text) && Buffer.from(text, 'base64').length % 4 === 0;
      expect(decoded !== null, text).to.equal(byPattern);
    }
  });

  it('VectorSchema decodes base64 and passes arrays through, with the same bounds', () => {
    expect(Array.from(v.parse(VectorSchema, 'AACAPwAAAEA=') as Float32Array)).to.deep.equal([1, 2]);
    expect(v.parse(VectorSchema, [1, 2])).to.deep.equal([1, 2]);
    expect(v.safeParse(VectorSchema, encodeFloat32Base64([1, NaN])).success).to.equal(false);
    expect(v.safeParse(VectorSchema, encodeFloat32Base64([1, 1e30])).success).to.equal(false);
    expect(v.safeParse(VectorSchema, '').success).to.equal(false);
    expect(v.safeParse(VectorSchema, encodeFloat32Base64(new Float32Array(1025))).success).to.equal(false);
    expect(v.safeParse(VectorSchema, 5).success).to.equal(false);
  });

  it('VectorSchema checks a Float32Array (what the body reader makes) as it checks a number array', () => {
    const floats = Float32Array.of(1, 2);
    expect(v.parse(VectorSchema, floats)).to.equal(floats);
    for (const bad of [new Float32Array(0), Float32Array.of(1, NaN), Float32Array.of(Infinity), Float32Array.of(3e38), new Float32Array(1025)]) {
      expect(v.safeParse(VectorSchema, bad).success, String(bad.length)).to.equal(false);
    }
  });

  it('keeps the path of a bad component in a number array', () => {
    const result = v.safeParse(VectorSchema, [1, 'x', 3]);
    expect(result.success).to.equal(false);
    expect(result.issues![0].path!.map((p) => p.key)).to.deep.equal([1]);
  });
});
