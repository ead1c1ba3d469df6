// What every route module receives, and the helpers routes share.
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { Config } from '../config.js';
import type { Embedder } from '../embedding/embedder.js';
import type { RequestSchemas } from '../schemas/index.js';
import { SERVICE_OWNER, type TurnOwner } from '../limits/loop-turns.js';
import type { Session } from '../sessions/session.js';
import type { SessionStore } from '../sessions/session-store.js';
import type { Registry } from 'prom-client';
import type { Readiness } from './readiness.js';
import type { Reservation } from '../limits/memory-budget.js';
import { ANSWER_WINDOW_BYTES, STREAM_FROM } from './answer-stream.js';
import type { Timings } from './timings.js';

export interface RouteDeps {
  router: Router;
  config: Config;
  store: SessionStore;
  schemas: RequestSchemas;
  /** Parses a JSON body. */
  json: Middleware;
  /** The same, reading vectors (`vector`, `queryVector`, `queryVectors`) straight into float32. */
  vectorJson: Middleware;
  /** Requires a valid bearer token (and applies the per-token rate limit). */
  auth: Middleware;
  /** The same, without recording dbOpenMs (POST /index/reset: the spec lists resetMs alone). */
  authWithoutDbOpenMs: Middleware;
  /** The per-address rate limit of POST /token. */
  tokenRateLimit: Middleware;
  /** The cap on imports in flight (after auth, before the body). */
  importSlots: Middleware;
  /** What GET /readyz reports. */
  readiness: Readiness;
  /** The app's Prometheus registry (GET /metrics). */
  metrics: Registry;
  /** What embeds texts (POST /embed, text records and queries): the builtin model on its threads, or the EMBEDDING_URL endpoint. */
  embedder: Embedder;
}

export interface AppState {
  timings: Timings;
  session: Session;
  /** The answer reply() made; respond.ts adds metrics and sends it. */
  reply?: Reply;
}

/** A success answer: `{"success":true`, the session's JSON when given, then `fields` (metrics are added to it last). */
export interface Reply {
  fields: Record<string, unknown>;
  sessionJson?: string;
  /** Set for an answer to be streamed (answer-stream.ts): its bytes held in the memory budget until it is sent. */
  streamed?: Reservation;
}

export const stateOf = (ctx: Context) => ctx.state as AppState;

/** Whose steps a request's slices are (loop-turns.ts): its session's token, the service's before auth. */
export const turnOwnerOf = (ctx: Context): TurnOwner => (ctx.state as Partial<AppState>).session?.tokenHash ?? SERVICE_OWNER;

const JSON_TYPE = 'application/json; charset=utf-8';

/** Answer 200 (or `status`) with the success envelope around `fields` (a fresh object: metrics are added to it on the way out, respond.ts). */
export function reply(ctx: Context, fields: Record<string, unknown>, status = 200): void {
  send(ctx, { fields }, status);
}

/**
 * Answer with the caller's session (after any change this request made) plus
 * `fields`. `answerBytes`: an estimate (answer-size.ts) for an answer that may
 * be large; from STREAM_FROM up it is streamed, holding its window in the
 * memory budget (503 when that does not fit).
 */
export function replyWithSession(ctx: Context, store: SessionStore, fields: Record<string, unknown> = {}, answerBytes = 0): void {
  const state = stateOf(ctx);
  const streamed =
    answerBytes >= STREAM_FROM
      ? store.budget.reserve(
          'answers',
          ANSWER_WINDOW_BYTES,
          "the server's memory budget is used up by answers in flight; nothing was changed, try again shortly",
        )
      : undefined;
  send(ctx, { fields, sessionJson: state.session.viewJson(store.now()), streamed });
}

function send(ctx: Context, answer: Reply, status = 200): void {
  const { response } = ctx;
  response.status = status;
  response.set('Content-Type', JSON_TYPE);
  stateOf(ctx).reply = answer;
}
