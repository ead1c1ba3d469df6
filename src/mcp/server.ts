// The MCP server of POST /mcp, one for the app (the SDK's low-level Server
// over request-transport.ts): tools/list and tools/call, resources and their
// template; each handler runs in the context of its /mcp request (its session,
// its timings). A tool's failure is its result with isError, carrying the
// API's code, status and message; a protocol mistake (an unknown tool, a bad
// resource URI) is a JSON-RPC error.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { packageInfo } from '../http/package-info.js';
import { toApiError } from '../http/error-handler.js';
import type { RequestTransport } from './request-transport.js';
import { listResources, readResource, RECORD_TEMPLATE } from './resources.js';
import type { ListedTool } from './tool-list.js';
import { MCP_TOOLS, type ToolContext } from './tools.js';

const INSTRUCTIONS =
  "A private, temporary memory for this task: remember texts (notes, passages, tool results), recall them by meaning and keywords, forget them. Everything is gone when the token's session expires.";

/**
 * The server validates JSON Schemas only for what it asks a client (elicitation), which this one never
 * does; the SDK's default would build an Ajv instance.
 */
const NEVER_VALIDATES: jsonSchemaValidator = {
  getValidator: () => () => {
    throw new Error('tempvec asks clients for nothing');
  },
};

/** A tool's result: its answer, or its failure as the API's error. */
async function callTool(context: ToolContext, name: string, args: unknown): Promise<CallToolResult> {
  const tool = MCP_TOOLS.find((candidate) => candidate.name === name);
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `no tool ${JSON.stringify(name)}; tools/list lists them`);
  try {
    const { structured, text } = await tool.run(context, args);
    return { content: [{ type: 'text', text }], structuredContent: structured };
  } catch (caught) {
    const { code, status, message, details } = toApiError(caught);
    return {
      isError: true,
      content: [{ type: 'text', text: `${code} (${status}): ${message}` }],
      structuredContent: { error: { code, status, message, ...(details === undefined ? {} : { details }) } },
    };
  }
}

/** The requests this server handles, each with its schema: checked by the transport before the server sees them. */
export const HANDLED_REQUESTS = {
  initialize: InitializeRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequestSchema,
  'resources/templates/list': ListResourceTemplatesRequestSchema,
  'resources/list': ListResourcesRequestSchema,
  'resources/read': ReadResourceRequestSchema,
};

/** The app's MCP server, connected to `transport` (whose requests carry their ToolContext). */
export function mcpServer(tools: ListedTool[], transport: RequestTransport<ToolContext>): Server {
  const contextOf = (extra: { requestId: RequestId }) => transport.contextOf(extra.requestId);
  const server = new Server(
    { name: packageInfo.name, version: packageInfo.version, title: 'tempvec memory' },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: NEVER_VALIDATES },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, ({ params }, extra) => callTool(contextOf(extra), params.name, params.arguments));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [RECORD_TEMPLATE] }));
  server.setRequestHandler(ListResourcesRequestSchema, ({ params }, extra) => listResources(contextOf(extra), params?.cursor));
  server.setRequestHandler(ReadResourceRequestSchema, ({ params }, extra) => readResource(contextOf(extra), params.uri));
  // Connecting only wires the transport's callbacks (its start() does nothing).
  void server.connect(transport);
  return server;
}
