// Building blocks shared by the request schemas. Bounds come from the config
// (src/config.ts), so validation and the OpenAPI document publish the same numbers.
import * as v from 'valibot';
import { ANALYZERS, EMBEDDING_MODEL_NAMES, METRICS, SPEC_LIMITS, VECTOR_TYPES, type Config } from '../config.js';
import { hasLoneSurrogate, jsonByteLength, utf8Length } from '../index/json-size.js';
import { filterNodesMessage, nodesPastLimit } from '../index/filter.js';
import { firstOverKeyLimit, firstTooDeep, type JsonPath } from './json-shape.js';

export { jsonByteLength };

/** A JSON object that is not an array or null; kept as is (no copy), so keys like "__proto__" stay plain data. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export const MetricSchema = v.pipe(v.picklist(METRICS), v.description('Similarity metric; fixed by the first add until POST /index/reset.'));
export const VectorTypeSchema = v.pipe(
  v.picklist(VECTOR_TYPES),
  v.description(
    'Storage of the vectors; fixed by the first add until POST /index/reset. float32: exact search. int8: float32 originals (get stays exact) plus int8 codes (one scale per vector) scanned first; the candidatePool best are re-ranked exactly in float32, so scores are exact and the result may miss a neighbour outside the pool.',
  ),
);

export const AnalyzerSchema = v.pipe(
  v.picklist(ANALYZERS),
  v.description(
    'How texts become terms for keyword search; fixed by the first add that names one or carries text, until POST /index/reset. standard: Unicode words, NFKC, lower case, diacritics folded, CJK as character bigrams. english: standard, less English stop words, Porter2 stems.',
  ),
);

export const EmbeddingSchema = v.pipe(
  v.picklist(EMBEDDING_MODEL_NAMES),
  v.description(
    "The model that embeds the session's texts (records with text and no vector, queries {text}); fixed by the first add that embeds a text or names one, with its dimension (use-lite-512: 512; a server's EMBEDDING_MODEL: EMBEDDING_DIMENSIONS) and metric (cosine), until POST /index/reset. A session whose vectors were given has none.",
  ),
);

/** A string of at most `maxBytes` UTF-8 bytes. */
export function utf8StringSchema(maxBytes: number, what: string) {
  return v.pipe(
    v.string(),
    v.check((text) => utf8Length(text) <= maxBytes, `${what} must be at most ${maxBytes} bytes as UTF-8`),
  );
}

export const DimensionsSchema = v.pipe(
  v.number(),
  v.integer(),
  v.minValue(1),
  v.maxValue(SPEC_LIMITS.maxDimensions),
  v.description('Vector length; fixed by the first add until POST /index/reset.'),
);

export { VectorSchema } from './vector.js';

/** valibot path items for an issue inside a checked object, so the error names the offending field. */
function pathItems(input: unknown, path: JsonPath) {
  let value = input;
  return path.map((key) => {
    const parent = value as Record<string | number, unknown>;
    value = parent[key];
    return { type: 'object' as const, origin: 'value' as const, input: parent as Record<string, unknown>, key: String(key), value };
  });
}

/** Depth and key-count limits of a metadata object or filter, reported at the offending field. */
function shapeLimits(what: string, maxDepth: number, maxKeys: number) {
  return v.rawCheck<Record<string, unknown>>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const deep = firstTooDeep(dataset.value, maxDepth);
    if (deep) {
      addIssue({ message: `${what} is nested deeper than ${maxDepth} levels`, path: pathItems(dataset.value, deep) as never });
      return;
    }
    const crowded = firstOverKeyLimit(dataset.value, maxKeys);
    if (crowded) addIssue({ message: `${what} has more than ${maxKeys} keys (nested objects included)`, path: pathItems(dataset.value, crowded) as never });
  });
}

/** maxFilterNodes, counted as the index's parse counts them, reported where the count passed it. */
function filterNodeLimit(maxNodes: number) {
  return v.rawCheck<Record<string, unknown>>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const past = nodesPastLimit(dataset.value, maxNodes);
    if (past === null) return;
    const items =
      past === ''
        ? []
        : past
            .slice(1)
            .split('/')
            .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    addIssue({ message: filterNodesMessage(maxNodes), path: pathItems(dataset.value, items) as never });
  });
}

export function commonSchemas(config: Config) {
  const IdSchema = v.pipe(
    v.string(),
    v.minLength(1, 'id must not be empty'),
    v.maxLength(config.maxIdLength),
    // The log writes UTF-8, where a lone surrogate becomes U+FFFD: two such ids would be one after a restart.
    v.check((id) => !hasLoneSurrogate(id), 'id must be well-formed UTF-16 (no lone surrogate)'),
    v.description('Key of the vector in the index: well-formed UTF-16 (no lone surrogate).'),
  );
  const MetadataSchema = v.pipe(
    v.custom<Record<string, unknown>>(isPlainObject, 'must be a JSON object (not an array or null)'),
    shapeLimits('metadata', config.maxJsonDepth, config.maxMetadataKeys),
    v.check((m) => jsonByteLength(m) <= config.maxMetadataBytes, `must be at most ${config.maxMetadataBytes} bytes as JSON`),
    v.description(
      `Plain JSON object, at most ${config.maxMetadataBytes} bytes as JSON, ${config.maxJsonDepth} levels deep and ${config.maxMetadataKeys} keys.`,
    ),
  );
  const FilterSchema = v.pipe(
    v.custom<Record<string, unknown>>(isPlainObject, 'must be a JSON object (not an array or null)'),
    shapeLimits('filter', config.maxJsonDepth, config.maxFilterKeys),
    filterNodeLimit(config.maxFilterNodes),
    v.description(
      'Metadata filter; every key must match. A key is a field path ("a.b" reaches nested objects and arrays of objects) ' +
        'or $and/$or (arrays of filters) or $not (a filter). A field value is either a plain value (equality; an array-valued field ' +
        'matches when it contains the value) or an object of operators: $eq, $ne, $gt, $gte, $lt, $lte (number or string operand), ' +
        '$in, $nin (arrays), $exists (boolean). $ne and $nin also match vectors without the field. A bad part is 400 VALIDATION_ERROR ' +
        'with its JSON Pointer in details.path.',
    ),
  );
  const TextSchema = v.pipe(
    utf8StringSchema(config.maxTextBytes, 'text'),
    v.description(
      `The vector's text (a chunk of a document): indexed for keyword search (BM25) by the session's analyzer, and returned with includeText. At most ${config.maxTextBytes} bytes as UTF-8.`,
    ),
  );
  return { IdSchema, MetadataSchema, FilterSchema, TextSchema };
}
