// GET / (what this service is and what it offers) and GET /sdk.js.
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { reply, type RouteDeps } from '../context.js';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { name: string; version: string; description: string };
const SDK_URL = new URL('../../../build/sdk.js', import.meta.url);

/** The bundled SDK, read once; its hash is the ETag. */
function loadSdk(): { body: string; etag: string } {
  let body: string;
  try {
    body = readFileSync(SDK_URL, 'utf8');
  } catch {
    body = 'throw new Error("the tempvec SDK is not built: run npm run build");\n';
  }
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

export function overviewRoutes({ router }: RouteDeps): void {
  const sdk = loadSdk();

  router.get('/sdk.js', (ctx) => {
    ctx.set('ETag', sdk.etag);
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'text/javascript; charset=utf-8';
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.body = sdk.body;
  });

  router.get('/', (ctx) => {
    // Every route the router knows, from the router itself, so the list cannot drift.
    const routes = router.stack
      .flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((method) => ({ method, path: layer.path })));
    reply(ctx, {
      name: pkg.name,
      version: pkg.version,
      description: pkg.description,
      links: { limits: '/limits', sdk: '/sdk.js', token: '/token' },
      routes,
    });
  });
}
