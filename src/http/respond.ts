// Writes every JSON answer, as Koa's respond() writes a body: the request
// path's `respond` step (app.ts). It starts the request's Timings; on the way
// back it sends the answer a route made with reply() or replyWithSession()
// (context.ts), or adds `metrics` to the error body the error handler made,
// with the timings as `metrics` and as a Server-Timing header (so browser
// devtools show them). Large answers go out in pieces (answer-stream.ts).
import type { Middleware } from 'koa';
import { answerStream, holdsStoredMetadata, jsonPieces } from './answer-stream.js';
import { type Reply, stateOf } from './context.js';
import { Timings } from './timings.js';

const utf8 = new TextDecoder();

/** The text of a reply: the same as JSON.stringify({ success: true, session, ...fields }), the session's JSON reused as it is. */
export function replyJson(reply: Reply): string {
  const head = replyHead(reply);
  const rest = holdsStoredMetadata(reply.fields) ? piecesText(reply.fields) : JSON.stringify(reply.fields);
  return rest === '{}' ? head + '}' : head + ',' + rest.slice(1);
}

/** jsonPieces' text: stored metadata spliced in as it is stored, never parsed. */
function piecesText(fields: Record<string, unknown>): string {
  let text = '';
  for (const piece of jsonPieces(fields)) text += typeof piece === 'string' ? piece : utf8.decode(piece);
  return text;
}

/** The first bytes of a reply, before its fields. */
function replyHead({ sessionJson }: Reply): string {
  return sessionJson === undefined ? '{"success":true' : '{"success":true,"session":' + sessionJson;
}

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

export const respond: Middleware = async (ctx, next) => {
  const timings = new Timings();
  ctx.state.timings = timings;
  await next();
  const { response } = ctx;
  // A reply() answer, unless something answered after it (the error handler).
  const reply = response.body == null ? stateOf(ctx).reply : undefined;
  if (!reply) stateOf(ctx).reply?.streamed?.release();
  const body = reply ? reply.fields : (response.body as Record<string, unknown> | null);
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
