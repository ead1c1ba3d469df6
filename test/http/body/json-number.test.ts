// The body reader's number parser (src/http/body/json-number.ts) against the
// plain reference, Math.fround(Number(text)), on random JSON number texts:
// the same float32 bits within ±maxAbs, a decline beyond it or on text that
// is not a JSON number, and the scanner left just past the number.
import { expect } from 'chai';
import fc from 'fast-check';
import { readFloat32 } from '../../../src/http/body/json-number.js';
import { DECLINE, JsonScanner } from '../../../src/http/body/json-scanner.js';

const MAX_ABS = 1e16;

/** readFloat32 of `text` followed by `tail`: its value and where the scanner stopped, or DECLINE. */
function read(text: string, tail = ','): { value: number; end: number } | typeof DECLINE {
  const scanner = new JsonScanner(Buffer.from(` ${text}${tail}`, 'latin1'));
  try {
    return { value: readFloat32(scanner, MAX_ABS), end: scanner.pos };
  } catch (err) {
    if (err === DECLINE) return DECLINE;
    throw err;
  }
}

const bits = (x: number) => new Uint32Array(Float32Array.of(x).buffer)[0];

/** JSON number texts: doubles as JS prints them, long digit runs, exponents, signed zeros. */
const numberText = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e17, max: 1e17 }).map(String),
  fc.float({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc
    .tuple(fc.boolean(), fc.stringMatching(/^(0|[1-9][0-9]{0,24})$/), fc.stringMatching(/^[0-9]{0,24}$/), fc.integer({ min: -60, max: 40 }))
    .map(([negative, whole, fraction, exponent]) => `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}e${exponent}`),
);

describe('body reader: JSON numbers to float32 (json-number.ts)', () => {
  it('gives the float32 of Number(text) within ±maxAbsComponent, declines beyond, and stops just past the number', () => {
    fc.assert(
      fc.property(numberText, (text) => {
        const wanted = Number(text);
        const got = read(text);
        if (!(Math.abs(wanted) <= MAX_ABS)) {
          expect(got, text).to.equal(DECLINE);
          return;
        }
        expect(got, text).to.not.equal(DECLINE);
        if (got === DECLINE) return;
        expect(bits(got.value), text).to.equal(bits(Math.fround(wanted)));
        expect(got.end, text).to.equal(1 + text.length);
      }),
      { numRuns: 5000 },
    );
  });

  it('declines what is not a JSON number', () => {
    for (const text of ['', '+1', '.5', '1.', '1.e5', '1e', '1e+', '-', 'x', '-x', 'NaN', 'Infinity']) {
      expect(read(text, ''), JSON.stringify(text)).to.equal(DECLINE);
    }
  });
});
