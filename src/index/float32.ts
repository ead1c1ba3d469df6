// Vectors are stored as float32. A value read back is printed as the shortest
// decimal that rounds to the same float32 (what Qdrant's and Pinecone's JSON
// show), so 0.1 comes back as 0.1, not 0.10000000149011612.

/** Shortest decimal number whose float32 rounding is `x` (itself a float32). */
export function shortestFloat32(x: number): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  // If p significant digits round-trip, so do p + 1: binary search on p.
  let lo = 1;
  let hi = 9;
  while (lo < hi) {
    const p = (lo + hi) >> 1;
    if (Math.fround(Number(x.toPrecision(p))) === x) hi = p;
    else lo = p + 1;
  }
  return Number(x.toPrecision(lo));
}

export function float32ArrayToNumbers(values: Float32Array): number[] {
  const out = new Array<number>(values.length);
  for (let i = 0; i < values.length; i++) out[i] = shortestFloat32(values[i]);
  return out;
}
