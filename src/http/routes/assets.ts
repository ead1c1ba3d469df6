// Files served as they are: the SDK bundle and its declarations, the kernel
// (for the SDK's in-page index), the demo page and its text sample, and the OpenAPI document.
// Each is read once at start-up and validated by a content hash (ETag).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Context } from 'koa';
import { backendFor } from '../../config.js';
import { KERNEL_FILES } from '../../kernel/load-node.js';
import { openApiDocument } from '../../openapi/document.js';
import type { RouteDeps } from '../context.js';
import { ASSET_HEADERS, pageHeaders } from '../security-headers.js';
import { packageInfo } from '../package-info.js';

export interface Asset {
  body: Buffer;
  etag: string;
  type: string;
  /** Security headers (security-headers.ts). */
  headers: Readonly<Record<string, string>>;
}

/** Relative to the repository root (the same from src/ under tsx and from dist/). */
const root = (path: string) => new URL(`../../../${path}`, import.meta.url);

export function asset(body: Buffer | string, type: string, headers: Readonly<Record<string, string>> = ASSET_HEADERS): Asset {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  return { body: bytes, type, headers, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"` };
}

/** A build output; when it is missing the route answers with why rather than failing at start-up. */
function buildFile(path: string, type: string, missing: string): Asset {
  try {
    return asset(readFileSync(root(path)), type);
  } catch {
    return asset(missing, type);
  }
}

/** A file's headers, then 304 when the client's copy is fresh (its validator matches): false then, true when the body is owed. */
export function bodyOwed(ctx: Context, file: Omit<Asset, 'body'>, cacheControl: string): boolean {
  ctx.set(file.headers);
  ctx.set('ETag', file.etag);
  ctx.set('Cache-Control', cacheControl);
  ctx.type = file.type;
  // ctx.fresh only holds for a 2xx status, and a route starts at 404.
  ctx.status = 200;
  if (!ctx.fresh) return true;
  ctx.status = 304;
  return false;
}

export function sendAsset(ctx: Context, file: Asset): void {
  if (bodyOwed(ctx, file, 'no-cache')) ctx.body = file.body;
}

/** The demo page, with a Content-Security-Policy that admits exactly its inline script and style. */
export function demoPage(): Asset {
  const page = buildFile('src/demo/index.html', 'text/html; charset=utf-8', 'the demo page is missing');
  return { ...page, headers: pageHeaders(page.body.toString('utf8')) };
}

export function assetRoutes({ router, config }: RouteDeps): void {
  const notBuilt = 'the tempvec SDK is not built: run npm run build';
  const sdk = buildFile('build/sdk.js', 'text/javascript; charset=utf-8', `throw new Error(${JSON.stringify(notBuilt)});\n`);
  const sdkTypes = buildFile('build/sdk.d.ts', 'application/typescript; charset=utf-8', `// ${notBuilt}\n`);
  // The build the server runs, and the simd128 build for pages that cannot run the relaxed one (LocalIndex falls back to it).
  const kernel = buildFile(KERNEL_FILES[backendFor(config.kernelBuild)].plain, 'application/wasm', '');
  const simd128Kernel = buildFile(KERNEL_FILES['wasm-simd128'].plain, 'application/wasm', '');
  const passages = buildFile('build/demo-passages.json', 'application/json; charset=utf-8', '[]');
  // Built on first request: most apps (the tests') never serve it.
  let openapi: Asset | undefined;

  router.get('/sdk.js', (ctx) => sendAsset(ctx, sdk));
  router.get('/sdk.d.ts', (ctx) => sendAsset(ctx, sdkTypes));
  router.get('/kernel.wasm', (ctx) => sendAsset(ctx, kernel));
  router.get('/kernel.simd128.wasm', (ctx) => sendAsset(ctx, simd128Kernel));
  router.get('/demo/passages.json', (ctx) => sendAsset(ctx, passages));
  router.get('/openapi.json', (ctx) => {
    openapi ??= asset(JSON.stringify(openApiDocument(config, packageInfo)), 'application/json; charset=utf-8');
    sendAsset(ctx, openapi);
  });
}
