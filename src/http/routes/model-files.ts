// The shipped model's files for pages (LocalIndex.embed): a manifest at a
// stable URL, revalidated by ETag, and each file at a URL holding its content
// hash, cached for a year as immutable. The files are read from node_modules
// and build/, never the network, and hashed on the first request (about 28 MB:
// a server whose pages never embed never reads them); they are streamed from
// disk, not kept in memory.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from 'koa';
import { ENCODER_FILE, modelDirectory } from '../../embedding/load-node.js';
import { MODEL_FILES_PREFIX, MODEL_MANIFEST_PATH, MODEL_NAME, type ModelFilesManifest } from '../../embedding/model-files.js';
import { MODEL } from '../../embedding/weights.js';
import { apiError } from '../../errors.js';
import type { RouteDeps } from '../context.js';
import { ASSET_HEADERS } from '../security-headers.js';
import { asset, bodyOwed, sendAsset, type Asset } from './assets.js';

/** A year, the longest max-age caches honour; the URL changes with the content. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

interface ModelFile {
  path: string;
  hash: string;
  bytes: number;
  type: string;
}

interface ModelFileTable {
  manifest: Asset;
  byName: Map<string, ModelFile>;
}

/** The first 16 hex digits of the file's SHA-256 (64 bits: a URL per version, not a security check); streamed, so 64 KiB at a time in memory. */
async function hashed(path: string, type: string): Promise<ModelFile> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { path, type, bytes, hash: hash.digest('hex').slice(0, 16) };
}

async function readModelFiles(): Promise<ModelFileTable> {
  const dir = modelDirectory();
  const modelJson = join(dir, 'model.json');
  const { weightsManifest } = JSON.parse(await readFile(modelJson, 'utf8')) as { weightsManifest: { paths: string[] }[] };
  const encoderPath = fileURLToPath(new URL(`../../../${ENCODER_FILE}`, import.meta.url));
  await stat(encoderPath).catch((err) => {
    throw new Error(`the embedding kernel is not built (${ENCODER_FILE}): run npm run build`, { cause: err });
  });
  const [encoder, model, vocab, ...shards] = await Promise.all([
    hashed(encoderPath, 'application/wasm'),
    hashed(modelJson, 'application/json'),
    hashed(join(dir, 'vocab.json'), 'application/json'),
    ...weightsManifest[0].paths.map((p) => hashed(join(dir, p), 'application/octet-stream')),
  ]);
  const names = new Map<string, ModelFile>();
  const url = (file: ModelFile) => {
    const name = basename(file.path);
    names.set(`${file.hash}/${name}`, file);
    return `${file.hash}/${name}`;
  };
  const manifest: ModelFilesManifest = {
    model: MODEL_NAME,
    dimensions: MODEL.width,
    maxTokens: MODEL.maxTokens,
    bytes: [encoder, model, vocab, ...shards].reduce((n, f) => n + f.bytes, 0),
    files: { encoder: url(encoder), model: url(model), shards: shards.map(url), vocab: url(vocab) },
  };
  return { manifest: asset(JSON.stringify(manifest), 'application/json; charset=utf-8'), byName: names };
}

function sendModelFile(ctx: Context, file: ModelFile): void {
  if (!bodyOwed(ctx, { headers: ASSET_HEADERS, etag: `"${file.hash}"`, type: file.type }, IMMUTABLE)) return;
  ctx.length = file.bytes;
  ctx.body = createReadStream(file.path);
}

export function modelFileRoutes({ router }: RouteDeps): void {
  // Read once; a failed read (files missing) is tried again by the next request.
  let table: Promise<ModelFileTable> | undefined;
  const files = async (): Promise<ModelFileTable> => {
    table ??= readModelFiles().catch((err: Error) => {
      table = undefined;
      throw apiError('NOT_FOUND', `the model files of ${MODEL_NAME} cannot be read: ${err.message}`);
    });
    return table;
  };

  router.get(`/${MODEL_MANIFEST_PATH}`, async (ctx) => sendAsset(ctx, (await files()).manifest));
  router.get(`${MODEL_FILES_PREFIX}/:hash/:file`, async (ctx) => {
    const file = (await files()).byName.get(`${ctx.params.hash}/${ctx.params.file}`);
    if (!file) throw apiError('NOT_FOUND', `no file ${ctx.path}: the model's files and their hashes are listed at /${MODEL_MANIFEST_PATH}`);
    sendModelFile(ctx, file);
  });
}
