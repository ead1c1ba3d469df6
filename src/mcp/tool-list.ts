// What tools/list answers: each tool's JSON Schema, made once per app from
// its valibot schema by the OpenAPI generator (src/openapi/json-schema.ts),
// self-contained (no $ref). The generator's `x-checks` (checks JSON Schema
// cannot say) are moved into the description, since agent hosts and model
// APIs may refuse keywords they do not know.
import type { JsonSchema } from '@valibot/to-json-schema';
import { toOpenApiSchema } from '../openapi/json-schema.js';
import type { McpToolSchemas } from './tool-schemas.js';
import { MCP_TOOLS } from './tools.js';

type JsonObject = Record<string, unknown>;

/** `schema` and every schema under it with `x-checks` said in its description instead. */
function withoutExtensions(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutExtensions);
  if (typeof schema !== 'object' || schema === null) return schema;
  const { 'x-checks': checks, ...rest } = schema as JsonObject;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(rest)) out[key] = withoutExtensions(value);
  if (Array.isArray(checks) && checks.length > 0) {
    const said = `Also checked: ${checks.join('; ')}.`;
    out.description = typeof out.description === 'string' ? `${out.description} ${said}` : said;
  }
  return out;
}

export interface ListedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object' } & JsonObject;
}

/** The tools as tools/list answers them. */
export function listedTools(schemas: McpToolSchemas): ListedTool[] {
  return MCP_TOOLS.map(({ name, title, description, schema }) => {
    const converted = withoutExtensions(toOpenApiSchema(schema(schemas), {})) as JsonSchema & JsonObject;
    return { name, title, description, inputSchema: { ...converted, type: 'object' } };
  });
}
