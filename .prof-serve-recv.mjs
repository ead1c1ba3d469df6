import { loadConfig } from './dist/config.js';
import { createApp } from './dist/http/app.js';
import { readInto } from './dist/http/read-into.js';
const config = loadConfig(process.env, { requestRatePerSec: 0, tokenRatePerMin: 0, port: 0 });
const { app } = createApp({ config });
const target = Buffer.alloc(4 << 20);
app.use(async (ctx, next) => {
  if (ctx.path === '/recv-into') { await readInto(ctx.req, Number(ctx.get('content-length')), 8 << 20, target); ctx.body = { success: true }; return; }
  if (ctx.path === '/drain') { for await (const c of ctx.req) void c; ctx.body = { success: true }; return; }
  return next();
});
const server = app.listen(0, '127.0.0.1', () => process.stdout.write(`READY ${server.address().port}\n`));
