// Growing typed arrays by doubling: the storage of the metadata store keeps
// its rows, entries and bytes in typed arrays, so the JS heap holds a few
// objects per session however many values it stores.

type Typed = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array;

/** `array`, or a copy at least `needed` long (doubled), its contents kept. */
export function grown<T extends Typed>(array: T, needed: number, fill?: number): T {
  if (needed <= array.length) return array;
  const length = grownLength(array.length, needed);
  const out = new (array.constructor as new (n: number) => T)(length);
  out.set(array);
  if (fill !== undefined) out.fill(fill, array.length);
  return out;
}

/** The length grown() gives an array of `length` that must hold `needed` (the memory budget projects growth with it). */
export function grownLength(length: number, needed: number): number {
  if (needed <= length) return length;
  let grownTo = Math.max(length, 8);
  while (grownTo < needed) grownTo *= 2;
  return grownTo;
}

/** The smallest power of two at least `n` (and at least 1). */
export function powerOfTwoAtLeast(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}
