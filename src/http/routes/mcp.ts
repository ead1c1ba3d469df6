// POST /mcp: the Model Context Protocol over Streamable HTTP, stateless (JSON
// answers, no SSE stream; src/mcp/request-transport.ts), behind
// the same auth, rate limit, body pipeline and budget as every route. The
// tools run the routes' own code in the caller's session (src/mcp/tools.ts).
// A request refused before the MCP server sees it (no or a bad token, a rate
// limit, a body past its cap) is answered with its HTTP status and a JSON-RPC
// error whose message says what to do (POST /token for a token).
import type { Middleware } from 'koa';
import { mcpBodyBytes } from '../../config.js';
import type { Reservation } from '../../limits/memory-budget.js';
import { RequestTransport } from '../../mcp/request-transport.js';
import { HANDLED_REQUESTS, mcpServer } from '../../mcp/server.js';
import { listedTools } from '../../mcp/tool-list.js';
import { mcpToolSchemas } from '../../mcp/tool-schemas.js';
import type { ToolContext } from '../../mcp/tools.js';
import { jsonBody } from '../body/index.js';
import type { RouteDeps } from '../context.js';
import { toApiError } from '../error-handler.js';

/** The JSON-RPC error code of a request the HTTP layer refused (the SDK's transport uses it for its own HTTP errors). */
const REFUSED = -32000;
/** Levels a JSON-RPC body adds around a tool's metadata beyond add-many's frame (body.ts BODY_FRAME_DEPTH). */
const MCP_FRAME_DEPTH = 2;
const ANSWERS_FULL = "the server's memory budget is used up by answers in flight; nothing was changed, try again shortly";

/** Errors thrown before or around the MCP server (auth, rate limit, body) as a JSON-RPC error body with their HTTP status. */
const jsonRpcErrors: Middleware = async (ctx, next) => {
  try {
    await next();
  } catch (caught) {
    const { status, code, message, details, headers } = toApiError(caught);
    ctx.status = status;
    for (const [name, value] of Object.entries(headers ?? {})) ctx.set(name, value);
    if (status === 401) ctx.set('WWW-Authenticate', `Bearer realm="tempvec", error="invalid_token"`);
    const data = { code, status, ...(details === undefined ? {} : { details }) };
    ctx.type = 'application/json';
    ctx.body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: REFUSED, message: `${code}: ${message}`, data } });
  }
};

export function mcpRoutes(deps: RouteDeps): void {
  const { router, config, store, auth } = deps;
  const schemas = mcpToolSchemas(config, deps.schemas);
  const tools = listedTools(schemas);
  // Its body is JSON.parse'd in one piece (no vector reader), so it has a cap of its own; a metadata
  // object sits two levels deeper than in add-many (params, arguments, metadata, item; a batch one more).
  const json = jsonBody({ ...config, maxBodyBytes: mcpBodyBytes(config), maxJsonDepth: config.maxJsonDepth + MCP_FRAME_DEPTH }, { budget: store.budget });
  const transport = new RequestTransport<ToolContext>(HANDLED_REQUESTS);
  mcpServer(tools, transport);
  router.post('/mcp', jsonRpcErrors, auth, json, async (ctx) => {
    // Answers held in the budget until they are sent (or the client has gone: then at once).
    const held: Reservation[] = [];
    let sent = false;
    ctx.res.once('close', () => {
      sent = true;
      for (const reservation of held) reservation.release();
    });
    const holdAnswer = (bytes: number) => {
      const reservation = store.budget.reserve('answers', bytes, ANSWERS_FULL);
      if (sent) reservation.release();
      else held.push(reservation);
    };
    const context: ToolContext = { ctx, deps, schemas, holdAnswer };
    const { status, body } = await transport.handle(ctx.request.body, ctx.get('accept'), ctx.get('mcp-protocol-version') || undefined, context);
    ctx.status = status;
    ctx.type = 'application/json';
    ctx.body = body === undefined ? '' : JSON.stringify(body);
  });
}
