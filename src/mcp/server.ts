// The MCP server of one /mcp request (stateless: a server and a transport per
// request, as the SDK's stateless examples do): tools/list and tools/call,
// resources and their template. A tool's failure is its result with isError,
// carrying the API's code, status and message; a protocol mistake (an unknown
// tool, a bad resource URI) is a JSON-RPC error.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { packageInfo } from '../http/package-info.js';
import { toApiError } from '../http/error-handler.js';
import { listResources, readResource, RECORD_TEMPLATE } from './resources.js';
import type { ListedTool } from './tool-list.js';
import { MCP_TOOLS, type ToolContext } from './tools.js';

const INSTRUCTIONS =
  "A private, temporary memory for this task: remember texts (notes, passages, tool results), recall them by meaning and keywords, forget them. Everything is gone when the token's session expires.";

/**
 * The server validates JSON Schemas only for what it asks a client (elicitation), which this one never
 * does; the SDK's default would build an Ajv instance per request.
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

export function mcpServer(tools: ListedTool[], context: ToolContext): Server {
  const server = new Server(
    { name: packageInfo.name, version: packageInfo.version, title: 'tempvec memory' },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: NEVER_VALIDATES },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, ({ params }) => callTool(context, params.name, params.arguments));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [RECORD_TEMPLATE] }));
  server.setRequestHandler(ListResourcesRequestSchema, ({ params }) => listResources(context, params?.cursor));
  server.setRequestHandler(ReadResourceRequestSchema, ({ params }) => readResource(context, params.uri));
  return server;
}
