// POST /mcp: the Model Context Protocol over Streamable HTTP, stateless (a
// server and a transport per request, JSON answers, no SSE stream), behind
// the same auth, rate limit, body pipeline and budget as every route. The
// tools run the routes' own code in the caller's session (src/mcp/tools.ts).
// A request refused before the MCP server sees it (no or a bad token, a rate
// limit, a body past its cap) is answered with its HTTP status and a JSON-RPC
// error whose message says what to do (POST /token for a token).
import type { Context, Middleware } from 'koa';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Reservation } from '../../limits/memory-budget.js';
import { mcpServer } from '../../mcp/server.js';
import { listedTools } from '../../mcp/tool-list.js';
import { mcpToolSchemas } from '../../mcp/tool-schemas.js';
import type { ToolContext } from '../../mcp/tools.js';
import type { RouteDeps } from '../context.js';
import { toApiError } from '../error-handler.js';

/** The JSON-RPC error code of a request the HTTP layer refused (the SDK's transport uses it for its own HTTP errors). */
const REFUSED = -32000;
/** Request headers the transport reads. */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id'];
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

/** The request as the SDK's web-standard transport reads it (its body is handed over parsed). */
function webRequest(ctx: Context): Request {
  const headers = new Headers();
  for (const name of TRANSPORT_HEADERS) {
    const value = ctx.get(name);
    if (value !== '') headers.set(name, value);
  }
  return new Request('http://tempvec.local/mcp', { method: 'POST', headers });
}

/** The transport's answer as this request's. */
async function relay(ctx: Context, response: Response): Promise<void> {
  ctx.status = response.status;
  response.headers.forEach((value, name) => {
    if (name !== 'content-length') ctx.set(name, value);
  });
  ctx.body = await response.text();
}

export function mcpRoutes(deps: RouteDeps): void {
  const { router, config, store, auth, json } = deps;
  const schemas = mcpToolSchemas(config, deps.schemas);
  const tools = listedTools(schemas);
  router.post('/mcp', jsonRpcErrors, auth, json, async (ctx) => {
    // Answers held in the budget until they are sent.
    const held: Reservation[] = [];
    ctx.res.once('close', () => {
      for (const reservation of held) reservation.release();
    });
    const context: ToolContext = { ctx, deps, schemas, holdAnswer: (bytes) => held.push(store.budget.reserve('answers', bytes, ANSWERS_FULL)) };
    const server = mcpServer(tools, context);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      await relay(ctx, await transport.handleRequest(webRequest(ctx), { parsedBody: ctx.request.body }));
    } finally {
      await server.close();
    }
  });
}
