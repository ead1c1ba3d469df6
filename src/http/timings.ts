// Per-request timings. Handlers measure their steps into ctx.state.timings;
// the outermost middleware adds them, with requestLatencyMs, to the body's
// `metrics` and to a Server-Timing header (so browser devtools show them).
import type { Middleware } from 'koa';
import { answerStream } from './answer-stream.js';
import { replyHead, replyJson, stateOf } from './context.js';

export class Timings {
  private readonly start = performance.now();
  readonly entries: Record<string, number> = {};

  /** Run `fn` and record its duration as `name` (milliseconds). */
  measure<T>(name: string, fn: () => T): T {
    const t0 = performance.now();
    try {
      return fn();
    } finally {
      this.entries[name] = round(performance.now() - t0);
    }
  }

  /** measure() for a step that settles later (a search waiting for its turn or for the kernel pool). */
  async measureAsync<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.entries[name] = round(performance.now() - t0);
    }
  }

  set(name: string, value: number): void {
    this.entries[name] = value;
  }

  elapsed(): number {
    return round(performance.now() - this.start);
  }
}

/** Microsecond resolution is all a millisecond figure needs. */
const round = (ms: number) => Math.round(ms * 1000) / 1000;

/** "name;dur=" for a metric name ending in Ms, "" for the others; made once per name (routes use a dozen). */
const entryPrefixes = new Map<string, string>();

function entryPrefix(name: string): string {
  let prefix = entryPrefixes.get(name);
  if (prefix === undefined) {
    prefix = name.endsWith('Ms') ? `${name.slice(0, -2)};dur=` : '';
    entryPrefixes.set(name, prefix);
  }
  return prefix;
}

/** One plain loop: this runs on every response. */
function serverTiming(metrics: Record<string, number>): string {
  let header = '';
  for (const name of Object.keys(metrics)) {
    const prefix = entryPrefix(name);
    if (prefix === '') continue;
    if (header !== '') header += ', ';
    header += prefix + metrics[name];
  }
  return header;
}

export const timingsMiddleware: Middleware = async (ctx, next) => {
  const timings = new Timings();
  ctx.state.timings = timings;
  await next();
  const { response } = ctx;
  // A reply() answer, unless something answered after it (the error handler).
  const reply = response.body == null ? stateOf(ctx).reply : undefined;
  if (!reply) stateOf(ctx).reply?.streamed?.release();
  const body = reply ? reply.fields : response.body as Record<string, unknown> | null;
  if (!reply && (!body || typeof body !== 'object' || Buffer.isBuffer(body) || !('success' in body))) return;
  const metrics = { requestLatencyMs: timings.elapsed(), ...timings.entries };
  response.set('Server-Timing', serverTiming(metrics));
  if (reply?.streamed) {
    // The header's requestLatency is the time to the first byte; the body's, made with its last piece, the time to the whole answer built.
    const { fields, streamed } = reply;
    const tail = () => ',"metrics":' + JSON.stringify({ ...metrics, requestLatencyMs: timings.elapsed() }) + '}';
    response.body = answerStream(replyHead(reply), fields, tail, () => streamed.release());
    return;
  }
  body!.metrics = metrics;
  // Sent as the same JSON text Koa would make of the envelope, without its
  // per-body checks (type sniffing, stream and Blob tests); reply() set the type.
  if (reply) response.body = replyJson(reply);
};
