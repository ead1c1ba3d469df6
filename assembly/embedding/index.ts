// The sentence encoder's kernel (build/embedding.wasm): the steps of the
// model's forward pass as flat functions over byte addresses and counts.
// src/embedding/encoder.ts owns the memory layout, checks every bound and
// drives the steps for a batch of token sequences; nothing here allocates,
// asserts or throws. SIMD128 only (no relaxed SIMD): every operation is
// IEEE-exact, so a text gets the same bits on every machine, in the page and
// in the server, alone or in any batch (a row's sums never depend on its
// neighbours).

/** First byte the binding may use: static data of this module ends here. */
export function heapBase(): usize {
  return __heap_base;
}

/** Columns per weight panel: gemm's weights are packed as [outWidth / 8][inWidth][8]. */
export const PANEL: i32 = 8;

/** Inputs summed per pass: each pass's sums start from 0 and are added to the running total (blocked summation: the rounding error grows with KC + inWidth / KC terms, not inWidth). */
export const KC: i32 = 64;

/** out = (pass ? out : 0) + acc, or, after the last pass, total + bias (+ residual), max(0, .) when relu. */
@inline function finish(acc: v128, first: bool, last: bool, bias: usize, residual: usize, out: usize, relu: bool): void {
  let y = first ? acc : f32x4.add(v128.load(out), acc);
  if (last) {
    y = f32x4.add(y, v128.load(bias));
    if (residual != 0) y = f32x4.add(y, v128.load(residual));
    if (relu) y = f32x4.max(y, f32x4.splat(0));
  }
  v128.store(out, y);
}

/** Four rows x one panel over inputs [from, to): 8 accumulators; each step loads the panel's 8 weights once for four rows. */
@inline function block4(x: usize, rowBytes: usize, panel: usize, from: i32, to: i32, bias: usize, residual: usize, out: usize, outBytes: usize, relu: bool): void {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), b0 = f32x4.splat(0), b1 = f32x4.splat(0);
  let c0 = f32x4.splat(0), c1 = f32x4.splat(0), d0 = f32x4.splat(0), d1 = f32x4.splat(0);
  let w = panel + (<usize>from << 5);
  let p = x + (<usize>from << 2);
  const end = x + (<usize>to << 2);
  for (; p < end; p += 4, w += 32) {
    const w0 = v128.load(w), w1 = v128.load(w, 16);
    const xa = v128.load32_splat(p), xb = v128.load32_splat(p + rowBytes);
    a0 = f32x4.add(a0, f32x4.mul(xa, w0)); a1 = f32x4.add(a1, f32x4.mul(xa, w1));
    b0 = f32x4.add(b0, f32x4.mul(xb, w0)); b1 = f32x4.add(b1, f32x4.mul(xb, w1));
    const xc = v128.load32_splat(p + 2 * rowBytes), xd = v128.load32_splat(p + 3 * rowBytes);
    c0 = f32x4.add(c0, f32x4.mul(xc, w0)); c1 = f32x4.add(c1, f32x4.mul(xc, w1));
    d0 = f32x4.add(d0, f32x4.mul(xd, w0)); d1 = f32x4.add(d1, f32x4.mul(xd, w1));
  }
  const first = from == 0, last = to == <i32>(rowBytes >> 2);
  const r1 = residual != 0 ? residual + outBytes : 0, r2 = residual != 0 ? residual + 2 * outBytes : 0, r3 = residual != 0 ? residual + 3 * outBytes : 0;
  finish(a0, first, last, bias, residual, out, relu); finish(a1, first, last, bias + 16, residual != 0 ? residual + 16 : 0, out + 16, relu);
  finish(b0, first, last, bias, r1, out + outBytes, relu); finish(b1, first, last, bias + 16, r1 != 0 ? r1 + 16 : 0, out + outBytes + 16, relu);
  finish(c0, first, last, bias, r2, out + 2 * outBytes, relu); finish(c1, first, last, bias + 16, r2 != 0 ? r2 + 16 : 0, out + 2 * outBytes + 16, relu);
  finish(d0, first, last, bias, r3, out + 3 * outBytes, relu); finish(d1, first, last, bias + 16, r3 != 0 ? r3 + 16 : 0, out + 3 * outBytes + 16, relu);
}

/** One row x one panel over inputs [from, to), with block4's sums in block4's order (so a row's result does not depend on its place). */
@inline function block1(x: usize, panel: usize, from: i32, to: i32, inWidth: i32, bias: usize, residual: usize, out: usize, relu: bool): void {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0);
  let w = panel + (<usize>from << 5);
  const end = x + (<usize>to << 2);
  for (let p = x + (<usize>from << 2); p < end; p += 4, w += 32) {
    const xa = v128.load32_splat(p);
    a0 = f32x4.add(a0, f32x4.mul(xa, v128.load(w)));
    a1 = f32x4.add(a1, f32x4.mul(xa, v128.load(w, 16)));
  }
  const first = from == 0, last = to == inWidth;
  finish(a0, first, last, bias, residual, out, relu);
  finish(a1, first, last, bias + 16, residual != 0 ? residual + 16 : 0, out + 16, relu);
}

/**
 * out[rows, outWidth] = x[rows, inWidth] . w + bias (+ residual[rows, outWidth]
 * when residual is not 0), then max(0, .) when relu is 1; out is neither x
 * nor residual. `w` is packed in panels of PANEL columns; outWidth is a
 * multiple of PANEL. Each panel (at most 48 KiB) is read from cache by every
 * block of four rows.
 */
export function gemm(x: usize, rows: i32, inWidth: i32, w: usize, outWidth: i32, bias: usize, residual: usize, out: usize, relu: i32): void {
  const rowBytes = <usize>inWidth << 2, outBytes = <usize>outWidth << 2;
  const panelBytes = rowBytes * PANEL;
  const fours = rows & ~3;
  for (let c = 0; c < outWidth; c += PANEL) {
    const panel = w + (<usize>(c / PANEL)) * panelBytes;
    const col = <usize>c << 2;
    for (let r = 0; r < fours; r += 4) {
      const at = <usize>r * outBytes + col;
      for (let from = 0; from < inWidth; from += KC)
        block4(x + <usize>r * rowBytes, rowBytes, panel, from, min(from + KC, inWidth), bias + col, residual != 0 ? residual + at : 0, out + at, outBytes, relu != 0);
    }
    for (let r = fours; r < rows; r++) {
      const at = <usize>r * outBytes + col;
      for (let from = 0; from < inWidth; from += KC)
        block1(x + <usize>r * rowBytes, panel, from, min(from + KC, inWidth), inWidth, bias + col, residual != 0 ? residual + at : 0, out + at, relu != 0);
    }
  }
}

/** Each row of x[rows, width] to mean 0, variance 1 (+ 1e-6), times scale plus bias, into out (float64 sums). */
export function layerNorm(x: usize, rows: i32, width: i32, scale: usize, bias: usize, out: usize): void {
  for (let r = 0; r < rows; r++) {
    const row = x + ((<usize>r * width) << 2), dst = out + ((<usize>r * width) << 2);
    let mean: f64 = 0;
    for (let i = 0; i < width; i++) mean += <f64>load<f32>(row + (i << 2));
    mean /= width;
    let variance: f64 = 0;
    for (let i = 0; i < width; i++) {
      const c = <f64>load<f32>(row + (i << 2)) - mean;
      variance += c * c;
    }
    const inv = 1 / Math.sqrt(variance / width + 1e-6);
    for (let i = 0; i < width; i++) {
      const o = <usize>i << 2;
      store<f32>(dst + o, <f32>((<f64>load<f32>(row + o) - mean) * inv * <f64>load<f32>(scale + o) + <f64>load<f32>(bias + o)));
    }
  }
}

/** signal[position, i] for every position below `positions`: sin of position / timescale for the first `timescales` columns, cos for the next. */
export function timingSignal(inverseTimescales: usize, timescales: i32, positions: i32, signal: usize): void {
  for (let t = 0; t < positions; t++)
    for (let i = 0; i < timescales; i++) {
      const angle = <f64>(<f32>t * load<f32>(inverseTimescales + (i << 2)));
      const row = signal + ((<usize>t * timescales * 2) << 2);
      store<f32>(row + (i << 2), <f32>Math.sin(angle));
      store<f32>(row + ((i + timescales) << 2), <f32>Math.cos(angle));
    }
}

/** out[t] = e + (e + signal[t]) for token t's embedding e (the graph adds the embedding to the embedding plus signal); ids are i32. */
export function embedInput(ids: usize, count: i32, embeddings: usize, width: i32, signal: usize, out: usize): void {
  const rowBytes = <usize>width << 2;
  for (let t = 0; t < count; t++) {
    const e = embeddings + <usize>load<i32>(ids + (t << 2)) * rowBytes;
    const s = signal + <usize>t * rowBytes, dst = out + <usize>t * rowBytes;
    for (let o: usize = 0; o < rowBytes; o += 16) {
      const v = v128.load(e + o);
      v128.store(dst + o, f32x4.add(v, f32x4.add(v, v128.load(s + o))));
    }
  }
}

@inline function hsum(v: v128): f32 {
  return f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1) + f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3);
}

/**
 * Self-attention of one sequence: qkv[count, 3 * width] holds each token's
 * query, key and value; `heads` heads of width / heads columns. Queries are
 * scaled by queryScale, logits softmaxed over all tokens (float64), and the
 * weighted values written to out[count, width]. `scratch` holds count f64
 * logits and width / heads floats.
 */
export function attention(qkv: usize, count: i32, width: i32, heads: i32, queryScale: f32, scratch: usize, out: usize): void {
  const headWidth = width / heads;
  const rowBytes = (<usize>width * 3) << 2, headBytes = <usize>headWidth << 2;
  const query = scratch + (<usize>count << 3);
  const scale = f32x4.splat(queryScale);
  for (let h = 0; h < heads; h++) {
    const col = <usize>h * headBytes;
    for (let i = 0; i < count; i++) {
      const q = qkv + <usize>i * rowBytes + col;
      for (let o: usize = 0; o < headBytes; o += 16) v128.store(query + o, f32x4.mul(v128.load(q + o), scale));
      let max = -Infinity;
      for (let j = 0; j < count; j++) {
        const k = qkv + <usize>j * rowBytes + (<usize>width << 2) + col;
        let acc = f32x4.splat(0);
        for (let o: usize = 0; o < headBytes; o += 16) acc = f32x4.add(acc, f32x4.mul(v128.load(query + o), v128.load(k + o)));
        const logit = <f64>hsum(acc);
        store<f64>(scratch + (j << 3), logit);
        if (logit > max) max = logit;
      }
      let z: f64 = 0;
      for (let j = 0; j < count; j++) {
        const p = Math.exp(load<f64>(scratch + (j << 3)) - max);
        store<f64>(scratch + (j << 3), p);
        z += p;
      }
      const dst = out + ((<usize>i * width) << 2) + col;
      for (let o: usize = 0; o < headBytes; o += 16) v128.store(dst + o, f32x4.splat(0));
      for (let j = 0; j < count; j++) {
        const p = f32x4.splat(<f32>(load<f64>(scratch + (j << 3)) / z));
        const v = qkv + <usize>j * rowBytes + (<usize>width << 3) + col;
        for (let o: usize = 0; o < headBytes; o += 16) v128.store(dst + o, f32x4.add(v128.load(dst + o), f32x4.mul(p, v128.load(v + o))));
      }
    }
  }
}

/** out[width] = the mean of x's `count` rows (float64 sums). */
export function meanPool(x: usize, count: i32, width: i32, out: usize): void {
  for (let i = 0; i < width; i++) {
    let s: f64 = 0;
    for (let t = 0; t < count; t++) s += <f64>load<f32>(x + ((<usize>t * width + i) << 2));
    store<f32>(out + (i << 2), <f32>(s / count));
  }
}

/** Each of `count` floats to its tanh. */
export function tanh(x: usize, count: i32): void {
  for (let i = 0; i < count; i++) store<f32>(x + (i << 2), <f32>Math.tanh(<f64>load<f32>(x + (i << 2))));
}

/** Each row of x[rows, width] divided by its length (at least 1e-6: the graph's max(sum of squares, 1e-12)). */
export function l2Normalize(x: usize, rows: i32, width: i32): void {
  for (let r = 0; r < rows; r++) {
    const row = x + ((<usize>r * width) << 2);
    let squares: f64 = 0;
    for (let i = 0; i < width; i++) {
      const v = <f64>load<f32>(row + (i << 2));
      squares += v * v;
    }
    const inv = 1 / Math.sqrt(Math.max(squares, 1e-12));
    for (let i = 0; i < width; i++) store<f32>(row + (i << 2), <f32>(<f64>load<f32>(row + (i << 2)) * inv));
  }
}
