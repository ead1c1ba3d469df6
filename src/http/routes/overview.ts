// GET /: JSON for API clients (what this service is and every route), the
// demo page for a browser (Accept: text/html). JSON stays the default.
import { reply, type RouteDeps } from '../context.js';
import { packageInfo } from '../package-info.js';
import { demoPage, sendAsset } from './assets.js';

export function overviewRoutes({ router }: RouteDeps): void {
  const demo = demoPage();

  router.get('/', (ctx) => {
    ctx.vary('Accept');
    if (ctx.accepts('application/json', 'text/html') === 'text/html') {
      sendAsset(ctx, demo);
      return;
    }
    // Every route the router knows, from the router itself, so the list cannot drift; parameters as OpenAPI writes them ({name}).
    const routes = router.stack.flatMap((layer) =>
      layer.methods.filter((m) => m !== 'HEAD').map((method) => ({ method, path: String(layer.path).replace(/:(\w+)/g, '{$1}') })),
    );
    reply(ctx, {
      name: packageInfo.name,
      version: packageInfo.version,
      description: packageInfo.description,
      links: {
        openapi: '/openapi.json',
        sdk: '/sdk.js',
        sdkTypes: '/sdk.d.ts',
        kernel: '/kernel.wasm',
        limits: '/limits',
        token: '/token',
      },
      routes,
    });
  });
}
