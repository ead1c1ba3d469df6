// The service as a child process for the HTTP and memory benches (so the
// load generator does not share the server's event loop), plus one extra
// route: POST /bare reads and parses the JSON body exactly as the API routes
// do and answers a constant; it is the framework floor /search is held to.
// Rate limits are off: they would cap the very rates being measured.
import { loadConfig } from '../../src/config.js';
import { createApp } from '../../src/http/app.js';
import { jsonBody } from '../../src/http/body.js';

const config = loadConfig(process.env, { requestRatePerSec: 0, tokenRatePerMin: 0, port: 0 });
const { app } = createApp({ config });
const parse = jsonBody(config);
app.use(async (ctx, next) => {
  if (ctx.method !== 'POST' || ctx.path !== '/bare') return next();
  await parse(ctx, async () => {
    ctx.body = { success: true };
  });
});
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`READY ${typeof address === 'object' && address ? address.port : 0}\n`);
});
// Exit normally on a signal, so --cpu-prof and similar flags can write their output.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(0));
