// valibot -> JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) with
// @valibot/to-json-schema. Two request checks have no JSON Schema keyword and
// are mapped here rather than dropped (the server still runs them):
//   - v.custom(isPlainObject): a JSON object that is not an array or null -> {type: object, additionalProperties: {}}
//   - v.check(fn, message): listed in the extension keyword `x-checks` by its message
//   - v.rawCheck(fn): listed in `x-checks` too; its pipe's description says what it checks
//   - v.finite(): every JSON number is finite already, so nothing to add
//   - exactlyOne(fields) (schemas/exactly-one.ts): oneOf, each alternative required
//   - v.lazy(fast path or declared schema): published as the declared schema
// Any other custom schema or action that cannot be converted throws, so a new
// one cannot silently publish as "anything".
import { toJsonSchema, type ConversionConfig, type JsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { isPlainObject } from '../schemas/common.js';
import { EXACTLY_ONE } from '../schemas/exactly-one.js';
import { QUERY_FIELDS } from '../schemas/query-fields.js';

// additionalProperties: {} says "any keys, any JSON values", so generated clients type it as an open record.
const CUSTOM_SCHEMAS = new Map<unknown, JsonSchema>([[isPlainObject, { type: 'object', additionalProperties: {} }]]);

const REF_PREFIX = '#/components/schemas/';

function conversion(definitions: Record<string, v.GenericSchema>): ConversionConfig {
  return {
    target: 'draft-2020-12',
    errorMode: 'throw',
    definitions,
    overrideRef: ({ referenceId }) => REF_PREFIX + referenceId,
    overrideSchema({ valibotSchema, jsonSchema, getterMap, referenceMap, definitions: converted }) {
      // v.lazy (a fast path over a declared schema): its declared schema inline, not as a $ref.
      if (valibotSchema.type === 'lazy') {
        const declared = getterMap.get((valibotSchema as unknown as v.LazySchema<v.GenericSchema>).getter);
        const id = declared && referenceMap.get(declared);
        if (!id || !converted[id]) throw new Error('a lazy schema without its declared schema');
        return converted[id];
      }
      if (valibotSchema.type !== 'custom') return undefined;
      const mapped = CUSTOM_SCHEMAS.get((valibotSchema as unknown as { check: unknown }).check);
      if (!mapped) throw new Error(`no JSON Schema mapping for the custom schema "${valibotSchema.expects}"`);
      return { ...jsonSchema, ...mapped };
    },
    overrideAction({ valibotAction, jsonSchema }) {
      if (valibotAction.type === 'finite') return jsonSchema;
      const alternatives = (valibotAction as { [EXACTLY_ONE]?: string[] })[EXACTLY_ONE];
      if (alternatives) return { ...jsonSchema, oneOf: alternatives.map((field) => ({ required: [field] })) };
      const queries = (valibotAction as { [QUERY_FIELDS]?: string[] })[QUERY_FIELDS];
      if (queries) {
        const [vector, id] = queries;
        const checks = [
          `${vector} or ${id}, not both`,
          `fusion only with ${queries[2]} and ${vector} or ${id}`,
          `as many ${queries[2]} as ${vector} or ${id} when both are given`,
        ];
        return { ...jsonSchema, anyOf: queries.map((field) => ({ required: [field] })), 'x-checks': checks };
      }
      if (valibotAction.type !== 'check' && valibotAction.type !== 'raw_check') return undefined;
      const message = (valibotAction as unknown as { message?: unknown }).message;
      const said = typeof message === 'string' ? message : 'checked by the server (see the description)';
      const checks = (jsonSchema as { 'x-checks'?: string[] })['x-checks'] ?? [];
      return { ...jsonSchema, 'x-checks': [...checks, said] };
    },
  };
}

/** One schema, its shared parts as $refs into components.schemas. */
export function toOpenApiSchema(schema: v.GenericSchema, definitions: Record<string, v.GenericSchema>): JsonSchema {
  const converted = toJsonSchema(schema, conversion(definitions));
  delete converted.$schema;
  delete converted.$defs;
  return converted;
}

/** components.schemas: each definition converted, referring to the others by $ref. */
export function toOpenApiComponents(definitions: Record<string, v.GenericSchema>): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(definitions)) {
    const others = Object.fromEntries(Object.entries(definitions).filter(([key]) => key !== name));
    out[name] = toOpenApiSchema(schema, others);
  }
  return out;
}
