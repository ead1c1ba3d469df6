// The kernel's SIMD base64 decoder (assembly/base64.ts) against Node's
// Buffer: the same floats on every text Node decodes without skipping a
// character (and whose bytes are whole floats), and a refusal on every
// other text, at every position of a 16-character SIMD block and of the
// scalar tail, for every padding.
import { expect } from 'chai';
import fc from 'fast-check';
import { MAX_ABS_BITS } from '../../src/http/body/base64-decoder.js';
import { instantiateKernel } from '../../src/kernel/kernel-module.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { seededRng } from '../helpers/random.js';

const memory = new WebAssembly.Memory({ initial: 4 });
const kernel = instantiateKernel(loadKernelModule(), memory) as unknown as {
  heapBase(): number;
  decodeFloat32Base64(src: number, length: number, dst: number, maxAbsBits: number): number;
  BASE64_BAD_TEXT: WebAssembly.Global;
  BASE64_OUT_OF_RANGE: WebAssembly.Global;
};
const BAD_TEXT = kernel.BASE64_BAD_TEXT.value as number;
const OUT_OF_RANGE = kernel.BASE64_OUT_OF_RANGE.value as number;
const SRC = Math.ceil(kernel.heapBase() / 16) * 16 + 3; // unaligned on purpose
const DST = SRC + 65536 + 1;
const GUARD = 32;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_';

/** Decode `text` with the kernel (no bound: any bits pass); the floats' bytes, or the negative result. */
function kernelDecode(text: string, maxAbsBits = 0x7fffffff): Uint8Array | number {
  const bytes = new Uint8Array(memory.buffer);
  bytes.set(Buffer.from(text, 'latin1'), SRC);
  // A guard around the output shows any write outside it.
  bytes.fill(0xa5, DST - GUARD, DST + text.length + GUARD);
  const count = kernel.decodeFloat32Base64(SRC, text.length, DST, maxAbsBits);
  // Output is written only within its bytes: all of them on success, at most what the length could decode to otherwise.
  const allowed = count > 0 ? count * 4 : Math.floor((text.length * 3) / 4);
  const stray = [...bytes.subarray(DST - GUARD, DST), ...bytes.subarray(DST + allowed, DST + text.length + GUARD)].some((b) => b !== 0xa5);
  if (stray) expect.fail(`${JSON.stringify(text)}: a byte written outside the output`);
  return count > 0 ? bytes.slice(DST, DST + count * 4) : count;
}

/** What the reader accepted before the kernel decoder: Node decodes every character into whole floats. */
function nodeDecode(text: string): Uint8Array | null {
  if (text.length === 0 || text.length % 4 !== 0 || text[text.length - 3] === '=') return null;
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const expected = (text.length / 4) * 3 - pad;
  if (expected % 4 !== 0 || expected === 0) return null;
  const out = Buffer.alloc(expected);
  return out.write(text, 0, expected, 'base64') === expected ? out : null;
}

function expectSame(text: string): void {
  const wanted = nodeDecode(text);
  const got = kernelDecode(text);
  if (wanted === null) {
    if (got !== BAD_TEXT) expect.fail(`${JSON.stringify(text)}: decoded by the kernel, not accepted before`);
  } else if (typeof got === 'number' || !Buffer.from(got).equals(wanted)) {
    expect(got, JSON.stringify(text)).to.deep.equal(new Uint8Array(wanted));
  }
}

const floatBytes = fc.integer({ min: 1, max: 600 }).chain((n) => fc.uint8Array({ minLength: n * 4, maxLength: n * 4 }));

describe('kernel base64 decoder against Buffer', () => {
  it('decodes random float bytes of every length exactly as Buffer, in either alphabet', () => {
    fc.assert(
      fc.property(floatBytes, fc.boolean(), (bytes, urlSafe) => {
        let text = Buffer.from(bytes).toString('base64');
        if (urlSafe) text = text.replace(/\+/g, '-').replace(/\//g, '_');
        expect(kernelDecode(text)).to.deep.equal(new Uint8Array(bytes));
      }),
      { numRuns: 300 },
    );
  });

  it('decodes every character at every position of a SIMD block and of the tail', () => {
    // 1..12 floats: 8 to 64 characters, padded or not, with 0 to 3 SIMD blocks before the scalar tail.
    for (let floats = 1; floats <= 12; floats++) {
      const base = Buffer.from(Uint8Array.from({ length: floats * 4 }, (_, i) => (i * 37 + 11) & 0xff)).toString('base64');
      for (let at = 0; at < base.length; at++) {
        for (const c of ALPHABET) expectSame(base.slice(0, at) + c + base.slice(at + 1));
      }
    }
  });

  it('refuses any byte outside the alphabet at any position (Node skips them)', () => {
    const base = Buffer.from(Uint8Array.from({ length: 36 }, (_, i) => i * 7)).toString('base64'); // 48 characters
    expect(base.length).to.equal(48);
    for (let at = 0; at < base.length; at++) {
      for (let byte = 0; byte < 256; byte++) {
        if (ALPHABET.includes(String.fromCharCode(byte))) continue;
        const text = base.slice(0, at) + String.fromCharCode(byte) + base.slice(at + 1);
        if (kernelDecode(text) !== BAD_TEXT || nodeDecode(text) !== null) expect.fail(`byte ${byte} at ${at}: not refused by both`);
      }
    }
  });

  it('reads final "=" padding as Buffer does and refuses "=" anywhere else', () => {
    for (let floats = 1; floats <= 12; floats++) {
      const bytes = Uint8Array.from({ length: floats * 4 }, (_, i) => 255 - i * 13);
      const text = Buffer.from(bytes).toString('base64');
      expectSame(text);
      // Leftover bits of the character before the padding set: Node ignores them.
      const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
      if (pad > 0) {
        const at = text.length - pad - 1;
        for (const c of ALPHABET) expectSame(text.slice(0, at) + c + text.slice(at + 1));
      }
      // "=" at each position, and the padding dropped or doubled.
      for (let at = 0; at < text.length; at++) expectSame(text.slice(0, at) + '=' + text.slice(at + 1));
      expectSame(text.replace(/=+$/, ''));
      expectSame(`${text}==`);
      expectSame(`${text}====`);
    }
  });

  it('refuses partial groups of four, partial floats and the empty text', () => {
    const rng = seededRng(7);
    for (let length = 0; length <= 80; length++) {
      const text = Array.from({ length }, () => ALPHABET[Math.floor(rng() * 64)]).join('');
      expectSame(text);
      expectSame(text.slice(0, Math.max(0, length - 1)) + (length > 0 ? '=' : ''));
      expectSame(text.slice(0, Math.max(0, length - 2)) + (length > 1 ? '==' : ''));
    }
  });

  it('refuses a decoded float above the bound on its bits, NaN and infinities', () => {
    const values = Float32Array.from({ length: 23 }, (_, i) => i - 11);
    const bytes = new Uint8Array(values.buffer);
    const bound = new Int32Array(new Float32Array([11]).buffer)[0];
    expect(kernelDecode(Buffer.from(bytes).toString('base64'), bound)).to.deep.equal(bytes);
    for (let i = 0; i < values.length; i++) {
      for (const bad of [11.000001, -12, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        const copy = values.slice();
        copy[i] = bad;
        expect(kernelDecode(Buffer.from(copy.buffer).toString('base64'), bound), `${bad} at ${i}`).to.equal(OUT_OF_RANGE);
      }
    }
    expect(MAX_ABS_BITS).to.be.greaterThan(0);
  });
});
