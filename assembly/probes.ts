// Memory read floors: what a scan of the same bytes cannot beat. Only the
// bench build (assembly/bench.ts) exports them.

/**
 * Read `bytes` bytes (a multiple of 64) from `start` with 16-byte SIMD loads
 * and do nothing else: the memory floor a scan of the same rows cannot beat.
 * The sum is returned so the loads cannot be optimised away.
 */
export function readFloor(start: usize, bytes: usize): f32 {
  let acc0 = f32x4.splat(0), acc1 = f32x4.splat(0), acc2 = f32x4.splat(0), acc3 = f32x4.splat(0);
  const end = start + bytes;
  for (let p = start; p < end; p += 64) {
    acc0 = f32x4.add(acc0, v128.load(p));
    acc1 = f32x4.add(acc1, v128.load(p, 16));
    acc2 = f32x4.add(acc2, v128.load(p, 32));
    acc3 = f32x4.add(acc3, v128.load(p, 48));
  }
  const s = f32x4.add(f32x4.add(acc0, acc1), f32x4.add(acc2, acc3));
  return f32x4.extract_lane(s, 0) + f32x4.extract_lane(s, 1) + f32x4.extract_lane(s, 2) + f32x4.extract_lane(s, 3);
}

/**
 * The floor as the single-query scan reads: `bytes` (a multiple of 64) from
 * `start` as four streams, one per quarter, in lockstep (the remainder after
 * four equal quarters of whole 64-byte blocks is read at the end). Memory
 * serves four far-apart streams faster than one, so this is the floor that
 * scan is held to; readFloor is the one-stream pass.
 */
export function readFloor4(start: usize, bytes: usize): f32 {
  let acc0 = f32x4.splat(0), acc1 = f32x4.splat(0), acc2 = f32x4.splat(0), acc3 = f32x4.splat(0);
  const quarter = (bytes >> 8) << 6;
  const p1 = start + quarter, p2 = p1 + quarter, p3 = p2 + quarter;
  for (let o: usize = 0; o < quarter; o += 64) {
    acc0 = f32x4.add(acc0, f32x4.add(v128.load(start + o), v128.load(start + o, 16)));
    acc1 = f32x4.add(acc1, f32x4.add(v128.load(p1 + o), v128.load(p1 + o, 16)));
    acc2 = f32x4.add(acc2, f32x4.add(v128.load(p2 + o), v128.load(p2 + o, 16)));
    acc3 = f32x4.add(acc3, f32x4.add(v128.load(p3 + o), v128.load(p3 + o, 16)));
    acc0 = f32x4.add(acc0, f32x4.add(v128.load(start + o, 32), v128.load(start + o, 48)));
    acc1 = f32x4.add(acc1, f32x4.add(v128.load(p1 + o, 32), v128.load(p1 + o, 48)));
    acc2 = f32x4.add(acc2, f32x4.add(v128.load(p2 + o, 32), v128.load(p2 + o, 48)));
    acc3 = f32x4.add(acc3, f32x4.add(v128.load(p3 + o, 32), v128.load(p3 + o, 48)));
  }
  const rest = readFloor(p3 + quarter, bytes - (quarter << 2));
  const s = f32x4.add(f32x4.add(acc0, acc1), f32x4.add(acc2, acc3));
  return f32x4.extract_lane(s, 0) + f32x4.extract_lane(s, 1) + f32x4.extract_lane(s, 2) + f32x4.extract_lane(s, 3) + rest;
}
