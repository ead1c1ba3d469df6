// Whether this engine runs WebAssembly's relaxed SIMD (the relaxed kernel
// build): Node 22 and later, Node 20 only with --experimental-wasm-relaxed-simd,
// Chrome 114 and Firefox 146 on (web-features); Safari not yet. Runs in Node and in pages.

/** A module of one function, (a, b, c) => f32x4.relaxed_madd(a, b, c): valid only where relaxed SIMD is. */
const RELAXED_MADD_MODULE = new Uint8Array([
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00, // magic, version 1
  0x01,
  0x08,
  0x01,
  0x60,
  0x03,
  0x7b,
  0x7b,
  0x7b,
  0x01,
  0x7b, // types: (v128, v128, v128) -> v128
  0x03,
  0x02,
  0x01,
  0x00, // functions: one of type 0
  0x0a,
  0x0d,
  0x01,
  0x0b,
  0x00,
  0x20,
  0x00,
  0x20,
  0x01,
  0x20,
  0x02,
  0xfd,
  0x85,
  0x02,
  0x0b, // code: local.get 0 1 2, f32x4.relaxed_madd (0xfd 0x105)
]);

let supported: boolean | undefined;

export function relaxedSimdSupported(): boolean {
  supported ??= typeof WebAssembly === 'object' && WebAssembly.validate(RELAXED_MADD_MODULE);
  return supported;
}
