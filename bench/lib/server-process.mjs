// The service as a child process for the HTTP and memory benches, run from
// the compiled dist/ exactly as `npm start` runs it (plain node, no tsx: its
// transform wraps every closure the server creates in a naming helper, a
// per-request cost production does not pay). Extra routes: POST /bare
// reads and parses the JSON body as the API routes' ordinary body parser does
// and answers a constant; it is the framework floor /search is held to.
// POST /bare-sized does the same and answers the constant set by POST
// /bench/answer (a real /search answer, so the floor also serialises and
// sends a body of the same shape and size).
// GET /bench/cpu answers the process's CPU time (process.cpuUsage(), every
// thread); GET /bench/memory its process.memoryUsage(); GET /bench/eventloop the event-loop delay since the last call
// (monitorEventLoopDelay, ms: p50, p99, max), and starts over; POST
// /bench/drain receives a body and answers a constant (the floor of taking
// a body in).
// POST /bench/compact (with a token) compacts that session's log now (DATA_DIR).
// Rate limits are off: they would cap the very rates being measured
// (BENCH_RATE_LIMITS=on keeps the configured ones, as bench:adversary needs).
// bench/lib/child-server.ts builds dist/ first when src/ is newer.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfig } from '../../dist/config.js';
import { createApp } from '../../dist/http/app.js';
import { jsonBody } from '../../dist/http/body/index.js';
import { createHttpServer } from '../../dist/http/http-server.js';

const rates = process.env.BENCH_RATE_LIMITS === 'on' ? {} : { requestRatePerSec: 0, tokenRatePerMin: 0, maxSessionsPerAddress: 0 };
const config = loadConfig(process.env, { ...rates, port: 0 });
const { app, store, restore } = createApp({ config });
const parse = jsonBody(config);
// Expired records are freed as the server frees them (bench/ttl.bench.ts); the sessions' own sweep stays off.
store.expirySweep.start();
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();
const answer = async (ctx) => {
  ctx.body = { success: true };
};
let sizedAnswer = { success: true };
const answerSized = async (ctx) => {
  ctx.body = { ...sizedAnswer };
};
app.use(async (ctx, next) => {
  // The server's own CPU time so far (microseconds), for benches that report CPU per request.
  if (ctx.method === 'GET' && ctx.path === '/bench/cpu') {
    ctx.body = process.cpuUsage();
    return;
  }
  if (ctx.method === 'GET' && ctx.path === '/bench/memory') {
    ctx.body = process.memoryUsage();
    return;
  }
  if (ctx.method === 'GET' && ctx.path === '/bench/eventloop') {
    const ms = (ns) => Math.round(ns / 1e4) / 100;
    ctx.body = { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) };
    loopDelay.reset();
    return;
  }
  // Receives the body and drops it: what any route pays to take in a body of that size.
  if (ctx.method === 'POST' && ctx.path === '/bench/drain') {
    for await (const chunk of ctx.req) void chunk;
    ctx.body = { success: true };
    return;
  }
  if (ctx.method === 'POST' && ctx.path === '/bench/compact') {
    const session = await store.authenticate(ctx.get('authorization').replace(/^Bearer /, ''));
    const t0 = performance.now();
    await store.compactLog(session);
    ctx.body = { success: true, ms: performance.now() - t0 };
    return;
  }
  if (ctx.method === 'POST' && ctx.path === '/bench/answer') {
    await parse(ctx, async () => {
      sizedAnswer = ctx.request.body;
      ctx.body = { success: true };
    });
    return;
  }
  if (ctx.method === 'POST' && ctx.path === '/bare-sized') return parse(ctx, () => answerSized(ctx));
  if (ctx.method !== 'POST' || ctx.path !== '/bare') return next();
  await parse(ctx, () => answer(ctx));
});
// Node's server as src/server.ts makes it: connection limits, timeouts, paced request starts.
const server = createHttpServer(app, config).listen(0, '127.0.0.1', async () => {
  const address = server.address();
  // With DATA_DIR: the sessions on disk, listed before READY (reopened lazily, on their first request).
  await restore();
  process.stdout.write(`READY ${typeof address === 'object' && address ? address.port : 0}\n`);
});
// Exit normally on a signal, so --cpu-prof and similar flags can write their output.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
