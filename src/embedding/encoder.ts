// The one algorithm of the forward pass over the kernel (build/embedding.wasm,
// assembly/embedding/): the weights are copied once into the instance's
// memory (dense kernels packed in panels of 8 columns), and a batch of token
// sequences runs as the steps below, in chunks of at most BATCH_TOKENS tokens
// whose rows go through every dense layer together. A sequence's vector does
// not depend on the chunk it runs in (the kernel's sums are per row).
import { type LayerWeights, MODEL, type ModelWeights } from './weights.js';

/** The kernel's exports (assembly/embedding/index.ts): byte addresses, counts and flags. */
export interface EncoderExports {
  heapBase(): number;
  readonly PANEL: WebAssembly.Global;
  gemm(x: number, rows: number, inWidth: number, w: number, outWidth: number, bias: number, residual: number, out: number, relu: number): void;
  layerNorm(x: number, rows: number, width: number, scale: number, bias: number, out: number): void;
  timingSignal(inverseTimescales: number, timescales: number, positions: number, signal: number): void;
  embedInput(ids: number, count: number, embeddings: number, width: number, signal: number, out: number): void;
  attention(qkv: number, count: number, width: number, heads: number, queryScale: number, scratch: number, out: number): void;
  meanPool(x: number, count: number, width: number, out: number): void;
  tanh(x: number, count: number): void;
  l2Normalize(x: number, rows: number, width: number): void;
}

/** Tokens per chunk: its activations take about 25 KiB per token (6.4 MiB), beside 28 MiB of weights. */
export const BATCH_TOKENS = 256;
const PAGE = 65536;

/** Bump allocation of 16-byte aligned float regions, from the module's heap base. */
class Regions {
  constructor(public end: number) {}
  take(floats: number): number {
    const at = this.end;
    this.end += Math.ceil(floats / 4) * 16;
    return at;
  }
}

/** A dense kernel [inWidth, outWidth] in panels of `panel` columns: [outWidth / panel][inWidth][panel]. */
export function packPanels(w: Float32Array, inWidth: number, outWidth: number, panel: number): Float32Array {
  const out = new Float32Array(w.length);
  let o = 0;
  for (let c = 0; c < outWidth; c += panel)
    for (let k = 0; k < inWidth; k++) {
      out.set(w.subarray(k * outWidth + c, k * outWidth + c + panel), o);
      o += panel;
    }
  return out;
}

interface LayerAt {
  normScale: number;
  normBias: number;
  qkv: number;
  qkvBias: number;
  queryScale: number;
  out: number;
  outBias: number;
  ffnNormScale: number;
  ffnNormBias: number;
  ffn1: number;
  ffn1Bias: number;
  ffn2: number;
  ffn2Bias: number;
}

export class Encoder {
  private readonly kernel: EncoderExports;
  private readonly memory: WebAssembly.Memory;
  // Weights (addresses in the instance's memory).
  private readonly embeddings: number;
  private readonly signal: number;
  private readonly layers: [LayerAt, LayerAt];
  private readonly residual: number;
  private readonly residualBias: number;
  private readonly tanhWeights: number;
  private readonly tanhBias: number;
  // Activations of one chunk, BATCH_TOKENS rows each.
  private readonly ids: number;
  private readonly x0: number;
  private readonly norm: number;
  private readonly qkv: number;
  private readonly att: number;
  private readonly h: number;
  private readonly h2: number;
  private readonly ffn: number;
  private readonly pooled: number;
  private readonly scratch: number;

  /** An instance of the compiled kernel with `weights` copied into its memory. */
  constructor(module: WebAssembly.Module, weights: ModelWeights) {
    this.memory = new WebAssembly.Memory({ initial: 1 });
    this.kernel = new WebAssembly.Instance(module, { env: { memory: this.memory } }).exports as unknown as EncoderExports;
    const panel = this.kernel.PANEL.value as number;
    const { inputWidth: d0, width: d, ffnWidth: f, maxTokens } = MODEL;
    const copies: [number, Float32Array][] = [];
    const r = new Regions(Math.ceil(this.kernel.heapBase() / 16) * 16);
    const put = (data: Float32Array) => {
      const at = r.take(data.length);
      copies.push([at, data]);
      return at;
    };
    const dense = (w: Float32Array, din: number, dout: number) => put(packPanels(w, din, dout, panel));
    const layerAt = (w: LayerWeights, din: number): LayerAt => ({
      normScale: put(w.normScale),
      normBias: put(w.normBias),
      qkv: dense(w.qkv, din, 3 * din),
      qkvBias: put(w.qkvBias),
      queryScale: w.queryScale,
      out: dense(w.out, din, d),
      outBias: put(w.outBias),
      ffnNormScale: put(w.ffnNormScale),
      ffnNormBias: put(w.ffnNormBias),
      ffn1: dense(w.ffn1, d, f),
      ffn1Bias: put(w.ffn1Bias),
      ffn2: dense(w.ffn2, f, d),
      ffn2Bias: put(w.ffn2Bias),
    });
    this.embeddings = put(weights.embeddings);
    const inverseTimescales = put(weights.inverseTimescales);
    this.signal = r.take(maxTokens * d0);
    this.layers = [layerAt(weights.layers[0], d0), layerAt(weights.layers[1], d)];
    this.residual = dense(weights.residual, d0, d);
    this.residualBias = put(weights.residualBias);
    this.tanhWeights = dense(weights.tanh, d, d);
    this.tanhBias = put(weights.tanhBias);
    const rows = BATCH_TOKENS;
    this.ids = r.take(rows);
    this.x0 = r.take(rows * d0);
    this.norm = r.take(rows * d);
    this.qkv = r.take(rows * 3 * d);
    this.att = r.take(rows * d);
    this.h = r.take(rows * d);
    this.h2 = r.take(rows * d);
    this.ffn = r.take(rows * f);
    this.pooled = r.take(rows * d);
    this.scratch = r.take(maxTokens * 2 + d);
    this.memory.grow(Math.ceil(r.end / PAGE) - 1);
    const floats = new Float32Array(this.memory.buffer);
    for (const [at, data] of copies) floats.set(data, at / 4);
    this.kernel.timingSignal(inverseTimescales, MODEL.timescales, maxTokens, this.signal);
  }

  /** Bytes of the instance's memory (weights, activations and the module's static data). */
  get memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }

  /**
   * The unit vectors (MODEL.width floats each, back to back) of token
   * sequences of 1 to MODEL.maxTokens ids each; throws RangeError on an empty
   * or longer sequence or an id outside the vocabulary.
   */
  encode(sequences: readonly (readonly number[])[]): Float32Array {
    for (const ids of sequences) checkSequence(ids);
    const out = new Float32Array(sequences.length * MODEL.width);
    for (let first = 0; first < sequences.length; ) {
      let last = first;
      let tokens = 0;
      while (last < sequences.length && tokens + sequences[last].length <= BATCH_TOKENS) tokens += sequences[last++].length;
      this.encodeChunk(sequences.slice(first, last), tokens);
      out.set(new Float32Array(this.memory.buffer, this.pooled, (last - first) * MODEL.width), first * MODEL.width);
      first = last;
    }
    return out;
  }

  /** One chunk's vectors, left at `pooled`. */
  private encodeChunk(sequences: readonly (readonly number[])[], rows: number): void {
    const k = this.kernel;
    const { inputWidth: d0, width: d } = MODEL;
    const ids = new Int32Array(this.memory.buffer, this.ids, rows);
    let at = 0;
    for (const seq of sequences) {
      ids.set(seq, at);
      k.embedInput(this.ids + at * 4, seq.length, this.embeddings, d0, this.signal, this.x0 + at * d0 * 4);
      at += seq.length;
    }
    const [l0, l1] = this.layers;
    // Layer 0: attention over its layer-normed input, plus a dense residual of the input itself.
    k.layerNorm(this.x0, rows, d0, l0.normScale, l0.normBias, this.norm);
    k.gemm(this.norm, rows, d0, l0.qkv, 3 * d0, l0.qkvBias, 0, this.qkv, 0);
    this.attend(sequences, d0, l0.queryScale);
    k.gemm(this.x0, rows, d0, this.residual, d, this.residualBias, 0, this.h, 0);
    k.gemm(this.att, rows, d0, l0.out, d, l0.outBias, this.h, this.h2, 0);
    this.feedForward(rows, l0);
    // Layer 1: attention plus its input.
    k.layerNorm(this.h, rows, d, l1.normScale, l1.normBias, this.norm);
    k.gemm(this.norm, rows, d, l1.qkv, 3 * d, l1.qkvBias, 0, this.qkv, 0);
    this.attend(sequences, d, l1.queryScale);
    k.gemm(this.att, rows, d, l1.out, d, l1.outBias, this.h, this.h2, 0);
    this.feedForward(rows, l1);
    // Each sequence's mean, a tanh layer, unit length.
    at = 0;
    for (let s = 0; s < sequences.length; s++) {
      k.meanPool(this.h + at * d * 4, sequences[s].length, d, this.norm + s * d * 4);
      at += sequences[s].length;
    }
    k.gemm(this.norm, sequences.length, d, this.tanhWeights, d, this.tanhBias, 0, this.pooled, 0);
    k.tanh(this.pooled, sequences.length * d);
    k.l2Normalize(this.pooled, sequences.length, d);
  }

  /** Each sequence's self-attention over its own rows of qkv, into att. */
  private attend(sequences: readonly (readonly number[])[], width: number, queryScale: number): void {
    let at = 0;
    for (const seq of sequences) {
      this.kernel.attention(this.qkv + at * 3 * width * 4, seq.length, width, MODEL.heads, queryScale, this.scratch, this.att + at * width * 4);
      at += seq.length;
    }
  }

  /** h = h2 + conv2(relu(conv1(layerNorm(h2)))). */
  private feedForward(rows: number, l: LayerAt): void {
    const k = this.kernel;
    const { width: d, ffnWidth: f } = MODEL;
    k.layerNorm(this.h2, rows, d, l.ffnNormScale, l.ffnNormBias, this.norm);
    k.gemm(this.norm, rows, d, l.ffn1, f, l.ffn1Bias, 0, this.ffn, 1);
    k.gemm(this.ffn, rows, f, l.ffn2, d, l.ffn2Bias, this.h2, this.h, 0);
  }
}

function checkSequence(ids: readonly number[]): void {
  if (ids.length === 0 || ids.length > MODEL.maxTokens) throw new RangeError(`a token sequence has 1 to ${MODEL.maxTokens} ids, not ${ids.length}`);
  for (const id of ids) if (!Number.isInteger(id) || id < 0 || id >= MODEL.vocabSize) throw new RangeError(`token id ${id} is outside the vocabulary`);
}
