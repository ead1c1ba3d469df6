// Each stored record as an MCP resource, tempvec://record/{id} (the id
// percent-encoded): resources/templates/list names the template,
// resources/list answers a page of records (list_memories' page, its
// cursor), resources/read one record's text and metadata as JSON.
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import * as v from 'valibot';
import { SPEC_LIMITS } from '../config.js';
import { ApiError } from '../errors.js';
import { stateOf } from '../http/context.js';
import { listPage } from '../http/routes/listing.js';
import type { ToolContext } from './tools.js';

const PREFIX = 'tempvec://record/';
/** The MCP error code of a resource that does not exist (the specification's). */
const RESOURCE_NOT_FOUND = -32002;
const JSON_TYPE = 'application/json';

export const RECORD_TEMPLATE = {
  uriTemplate: `${PREFIX}{id}`,
  name: 'record',
  title: 'A stored memory',
  description: "One record of this session: its text and metadata as JSON. {id} is the record's id, percent-encoded.",
  mimeType: JSON_TYPE,
};

const uriOf = (id: string) => PREFIX + encodeURIComponent(id);

/** A page of the session's records as resources (resources/list); its cursor is list_memories'. A bad cursor is invalid params. */
export async function listResources({ ctx, deps }: ToolContext, cursor: string | undefined) {
  const options = v.safeParse(deps.schemas.ListRequestSchema, { cursor, limit: SPEC_LIMITS.defaultListLimit });
  if (!options.success) throw new McpError(ErrorCode.InvalidParams, `invalid cursor: ${options.issues[0].message}`);
  try {
    const { vectors, nextCursor } = await listPage(ctx, deps.config, options.output);
    const resources = vectors.map(({ id }) => ({ uri: uriOf(id), name: id, mimeType: JSON_TYPE }));
    return nextCursor === null ? { resources } : { resources, nextCursor };
  } catch (caught) {
    if (caught instanceof ApiError && caught.status === 400) throw new McpError(ErrorCode.InvalidParams, `${caught.code}: ${caught.message}`);
    throw caught;
  }
}

/** One record (resources/read), or the specification's resource-not-found error. */
export async function readResource({ ctx }: ToolContext, uri: string) {
  const id = uri.startsWith(PREFIX) ? decodedId(uri.slice(PREFIX.length)) : undefined;
  if (id === undefined) throw new McpError(RESOURCE_NOT_FOUND, `no such resource: ${uri} (records are ${RECORD_TEMPLATE.uriTemplate})`, { uri });
  const { session } = stateOf(ctx);
  await session.settled(); // an add applied in slices: all of it or none
  const stored = session.index.get(id);
  if (!stored) throw new McpError(RESOURCE_NOT_FOUND, `no record ${JSON.stringify(id)} in this session`, { uri });
  const record = { id, text: stored.text?.toJSON() ?? null, metadata: stored.metadata.toJSON() };
  return { contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(record) }] };
}

function decodedId(encoded: string): string | undefined {
  try {
    const id = decodeURIComponent(encoded);
    return id === '' ? undefined : id;
  } catch {
    return undefined;
  }
}
