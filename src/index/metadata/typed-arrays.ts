// Growing typed arrays by doubling: the storage of the metadata store keeps
// its rows, entries and bytes in typed arrays, so the JS heap holds a few
// objects per session however many values it stores.

type Typed = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array;

/** `array`, or a copy at least `needed` long (doubled), its contents kept. */
export function grown<T extends Typed>(array: T, needed: number, fill?: number): T {
  if (needed <= array.length) return array;
  let length = Math.max(array.length, 8);
  while (length < needed) length *= 2;
  const out = new (array.constructor as new (n: number) => T)(length);
  out.set(array);
  if (fill !== undefined) out.fill(fill, array.length);
  return out;
}

/** The smallest power of two at least `n` (and at least 1). */
export function powerOfTwoAtLeast(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}
