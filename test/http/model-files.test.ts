// The embedding model's files for pages: a manifest at a stable URL
// (revalidated by ETag) lists each file at a URL holding its content hash,
// served immutable with its content type and CORS, byte for byte the file in
// node_modules or build/; a hash that is not the file's is 404.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { modelDirectory } from '../../src/embedding/load-node.js';
import { MODEL_FILES_PREFIX, MODEL_MANIFEST_PATH, type ModelFilesManifest } from '../../src/embedding/model-files.js';
import { useServer } from '../helpers/http.js';
import { REVALIDATE } from '../helpers/openapi-check.js';

const sha16 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex').slice(0, 16);

describe('GET /models/use-lite-512/ (the model files for pages)', function () {
  this.timeout(30_000);
  const api = useServer();
  let manifest: ModelFilesManifest;
  let manifestUrl: string;

  before(async () => {
    manifestUrl = `${api.base}/${MODEL_MANIFEST_PATH}`;
    manifest = (await (await fetch(manifestUrl)).json()) as ModelFilesManifest;
  });

  it('the manifest names the model, its dimension and window, and every file by its hash', () => {
    const dir = modelDirectory();
    const shards = (JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')) as { weightsManifest: { paths: string[] }[] }).weightsManifest[0].paths;
    const files: [string, string][] = [
      [manifest.files.encoder, new URL('../../build/embedding.wasm', import.meta.url).pathname],
      [manifest.files.model, join(dir, 'model.json')],
      [manifest.files.vocab, join(dir, 'vocab.json')],
      ...manifest.files.shards.map((url, i): [string, string] => [url, join(dir, shards[i])]),
    ];
    expect(manifest).to.include({ model: 'use-lite-512', dimensions: 512, maxTokens: 128 });
    expect(manifest.files.shards).to.have.length(shards.length);
    let bytes = 0;
    for (const [url, path] of files) {
      const content = readFileSync(path);
      expect(url).to.equal(`${sha16(content)}/${path.slice(path.lastIndexOf('/') + 1)}`);
      bytes += content.length;
    }
    expect(manifest.bytes).to.equal(bytes);
  });

  it('serves each file byte for byte, immutable, with its content type, CORS and the asset headers', async () => {
    const types: [string, string][] = [
      [manifest.files.encoder, 'application/wasm'],
      [manifest.files.model, 'application/json; charset=utf-8'],
      [manifest.files.vocab, 'application/json; charset=utf-8'],
      ...manifest.files.shards.map((url): [string, string] => [url, 'application/octet-stream']),
    ];
    for (const [url, type] of types) {
      const res = await fetch(new URL(url, manifestUrl), { headers: { origin: 'https://elsewhere.example' } });
      expect(res.status, url).to.equal(200);
      expect(res.headers.get('content-type'), url).to.equal(type);
      expect(res.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      expect(res.headers.get('access-control-allow-origin')).to.equal('*');
      expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
      const body = new Uint8Array(await res.arrayBuffer());
      expect(Number(res.headers.get('content-length'))).to.equal(body.length);
      expect(sha16(body), url).to.equal(url.slice(0, 16));
      expect(res.headers.get('etag')).to.equal(`"${url.slice(0, 16)}"`);
    }
  });

  it('answers 304 to a file whose ETag matches, and revalidates the manifest (no-cache, ETag)', async () => {
    const file = await fetch(new URL(manifest.files.vocab, manifestUrl), {
      headers: { 'if-none-match': `"${manifest.files.vocab.slice(0, 16)}"`, ...REVALIDATE },
    });
    expect(file.status).to.equal(304);
    const first = await fetch(manifestUrl);
    expect(first.headers.get('cache-control')).to.equal('no-cache');
    expect(first.headers.get('access-control-allow-origin')).to.equal('*');
    const again = await fetch(manifestUrl, { headers: { 'if-none-match': first.headers.get('etag')!, ...REVALIDATE } });
    expect(again.status).to.equal(304);
  });

  it('answers 404 NOT_FOUND, pointing at the manifest, for a hash or a name that is not a current file', async () => {
    const [hash, name] = manifest.files.vocab.split('/');
    for (const path of [`0000000000000000/${name}`, `${hash}/model.json`, `${hash}/../../package.json`, `${hash}`]) {
      const res = await fetch(`${api.base}${MODEL_FILES_PREFIX}/${path}`);
      expect(res.status, path).to.equal(404);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).to.equal('NOT_FOUND');
      if (path.split('/').length === 2) expect(body.error.message).to.include(MODEL_MANIFEST_PATH);
    }
  });
});
