// The model's forward pass written plainly (float32 storage, float64 sums),
// the reference the kernel's vectors are tested against. One sequence of
// token ids (at most MODEL.maxTokens, at least one) in, one unit vector out.
import { type LayerWeights, MODEL, type ModelWeights } from './weights.js';

/** y[n, out] = x[n, in] . w[in, out] + bias. */
function dense(x: Float32Array, n: number, w: Float32Array, bias: Float32Array): Float32Array {
  const din = x.length / n;
  const dout = bias.length;
  const y = new Float32Array(n * dout);
  for (let t = 0; t < n; t++)
    for (let o = 0; o < dout; o++) {
      let s = 0;
      for (let i = 0; i < din; i++) s += x[t * din + i] * w[i * dout + o];
      y[t * dout + o] = s + bias[o];
    }
  return y;
}

/** Each row scaled to mean 0 and variance 1 (+ 1e-6), then by scale and bias. */
function layerNorm(x: Float32Array, n: number, scale: Float32Array, bias: Float32Array): Float32Array {
  const d = scale.length;
  const y = new Float32Array(n * d);
  for (let t = 0; t < n; t++) {
    const row = x.subarray(t * d, (t + 1) * d);
    let mean = 0;
    for (const v of row) mean += v;
    mean /= d;
    let variance = 0;
    for (const v of row) variance += (v - mean) * (v - mean);
    const r = 1 / Math.sqrt(variance / d + 1e-6);
    for (let i = 0; i < d; i++) y[t * d + i] = (row[i] - mean) * r * scale[i] + bias[i];
  }
  return y;
}

/** Multi-head self-attention over all n tokens (no padding), then the output transform. */
function attention(x: Float32Array, n: number, w: LayerWeights): Float32Array {
  const d = w.normScale.length;
  const hd = d / MODEL.heads;
  const qkv = dense(x, n, w.qkv, w.qkvBias);
  const out = new Float32Array(n * d);
  const p = new Float64Array(n);
  for (let h = 0; h < MODEL.heads; h++)
    for (let i = 0; i < n; i++) {
      let max = -Infinity;
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let k = 0; k < hd; k++) s += Math.fround(qkv[i * 3 * d + h * hd + k] * w.queryScale) * qkv[j * 3 * d + d + h * hd + k];
        p[j] = s;
        max = Math.max(max, s);
      }
      let z = 0;
      for (let j = 0; j < n; j++) {
        p[j] = Math.exp(p[j] - max);
        z += p[j];
      }
      for (let k = 0; k < hd; k++) {
        let s = 0;
        for (let j = 0; j < n; j++) s += (p[j] / z) * qkv[j * 3 * d + 2 * d + h * hd + k];
        out[i * d + h * hd + k] = s;
      }
    }
  return dense(out, n, w.out, w.outBias);
}

/** x + conv2(relu(conv1(layerNorm(x)))). */
function feedForward(x: Float32Array, n: number, w: LayerWeights): Float32Array {
  const h = dense(layerNorm(x, n, w.ffnNormScale, w.ffnNormBias), n, w.ffn1, w.ffn1Bias);
  for (let i = 0; i < h.length; i++) h[i] = Math.max(h[i], 0);
  const y = dense(h, n, w.ffn2, w.ffn2Bias);
  for (let i = 0; i < y.length; i++) y[i] += x[i];
  return y;
}

/** Layer 0's input: twice the token's embedding plus the timing signal (sin, then cos, of position / timescale). */
function inputOf(ids: readonly number[], m: ModelWeights): Float32Array {
  const d = MODEL.inputWidth;
  const x = new Float32Array(ids.length * d);
  for (let t = 0; t < ids.length; t++)
    for (let i = 0; i < d; i++) {
      const e = m.embeddings[ids[t] * d + i];
      const angle = Math.fround(t * m.inverseTimescales[i % MODEL.timescales]);
      const signal = Math.fround(i < MODEL.timescales ? Math.sin(angle) : Math.cos(angle));
      x[t * d + i] = e + Math.fround(e + signal);
    }
  return x;
}

/** The unit vector of one sequence of token ids. */
export function referenceEmbedding(ids: readonly number[], m: ModelWeights): Float32Array {
  const n = ids.length;
  if (n === 0 || n > MODEL.maxTokens) throw new RangeError(`a sequence has 1 to ${MODEL.maxTokens} tokens, not ${n}`);
  const [l0, l1] = m.layers;
  const x0 = inputOf(ids, m);
  const a0 = attention(layerNorm(x0, n, l0.normScale, l0.normBias), n, l0);
  const r0 = dense(x0, n, m.residual, m.residualBias);
  for (let i = 0; i < a0.length; i++) a0[i] += r0[i];
  const h1 = feedForward(a0, n, l0);
  const a1 = attention(layerNorm(h1, n, l1.normScale, l1.normBias), n, l1);
  for (let i = 0; i < a1.length; i++) a1[i] += h1[i];
  const h2 = feedForward(a1, n, l1);
  const d = MODEL.width;
  const pooled = new Float32Array(d);
  for (let i = 0; i < d; i++) {
    let s = 0;
    for (let t = 0; t < n; t++) s += h2[t * d + i];
    pooled[i] = s / n;
  }
  const y = dense(pooled, 1, m.tanh, m.tanhBias);
  let squares = 0;
  for (let i = 0; i < d; i++) {
    y[i] = Math.tanh(y[i]);
    squares += y[i] * y[i];
  }
  const r = 1 / Math.sqrt(Math.max(squares, 1e-12));
  for (let i = 0; i < d; i++) y[i] *= r;
  return y;
}
