// Planning an add: the whole batch checked against the index (config lock,
// dimensions, zero vectors, text size, capacity), its vectors packed, its
// texts analysed and its metadata measured, and the most memory it can add,
// over a read-only view of the index. Nothing changes until the plan is
// applied (VectorIndex.applyUpsert), so a refused batch leaves no trace.
import type { AnalyzerName } from '../config.js';
import { apiError, pointer } from '../errors.js';
import { runSteps } from '../limits/steps.js';
import { analyzerFor, lockAnalyzer, lockEmbedding, lockVectorConfig } from './config-lock.js';
import type { Metadata } from './filter.js';
import type { IndexRead } from './index-read.js';
import { LOG_ENTRY_HEAP_BYTES } from './insertion-order.js';
import { jsonText, utf8Length, type JsonText } from './json-size.js';
import type { EntryCount } from './metadata/metadata-index.js';
import { MetadataStore } from './metadata/metadata-store.js';
import { rowHeapBytes } from './row-table.js';
import { termBytes } from './text/analyzer.js';
import type { JoinedTerms } from './text/joined-terms.js';
import { TextStore, type PreparedText } from './text/text-store.js';
import type { RowTtl } from './row-expiry.js';
import type { UpsertOptions, UpsertPlan, VectorInput } from './types.js';
import { isZero, zeroVector } from './zero-vector.js';

type PathOf = (i: number) => string;

/** Records planned a step at most: a step of an import's plan (up to MAX_VECTORS_PER_SESSION records) stays well under a slice. */
const PLAN_STEP_RECORDS = 1024;

/**
 * Check a batch against the index (dimension, metric, zero vectors,
 * capacity) without changing anything; throws the first problem found.
 */
export function planUpsert(index: IndexRead, records: VectorInput[], options: UpsertOptions): UpsertPlan {
  return runSteps(planUpsertSteps(index, records, options));
}

/**
 * planUpsert() with a pause after every PLAN_STEP_RECORDS records of each of its passes (Slices.run: an
 * import's plan in its write turn); the same checks in the same order, so the same first problem. The
 * index must not change until it is done (the session's write turn is held meanwhile).
 */
export function* planUpsertSteps(index: IndexRead, records: VectorInput[], options: UpsertOptions): Generator<void, UpsertPlan, void> {
  const pathOf = options.pathOf ?? ((i: number) => pointer('vectors', i));
  const { dimensions, metric, vectorType, vectors } = yield* checkVectors(index, records, options, pathOf);
  const { texts, analyzer, textBytesAdded } = yield* prepareTexts(index, records, options, pathOf);
  const size = index.rows.size;
  const { newIds, heapBytesAdded, metadataJson, metadataBatch } = yield* measureRows(index, records, options);
  // A replace adds nothing: taken even by an index over a MAX_VECTORS_PER_SESSION lowered since it was filled.
  if (newIds > 0 && size + newIds > index.maxVectors) {
    throw apiError('CAPACITY_EXCEEDED', `the index holds ${size} of ${index.maxVectors} vectors; this request adds ${newIds} more`, {
      maxVectors: index.maxVectors,
      vectorCount: size,
      adding: newIds,
    });
  }
  const rowsNeeded = size + newIds;
  const ttls = yield* planTtls(records, options.writtenAt ?? index.clock(), pathOf);
  return {
    records,
    vectors,
    dimensions,
    metric,
    vectorType,
    rowsNeeded,
    version: index.version,
    metadataJson,
    heapBytesAdded,
    metadataBytesAdded: index.metadata.growthUpper(metadataBatch, size, rowsNeeded) + (ttls ? index.expiry.growthUpper(rowsNeeded) : 0),
    texts,
    analyzer,
    embedding: lockEmbedding(index.config, options),
    textBytesAdded,
    ttls,
  };
}

/** The ids new to the index (a replace instead leaves a dead log entry), the heap they take, and each record's metadata measured. */
function* measureRows(index: IndexRead, records: VectorInput[], options: UpsertOptions) {
  const newIds = new Set<string>();
  const ahead = options.preparedMetadata?.json.length === records.length ? options.preparedMetadata : undefined;
  const metadataJson = new Array<JsonText | null>(records.length);
  let heapBytesAdded = 0;
  const metadataBatch = MetadataStore.batch();
  for (let i = 0; i < records.length; i++) {
    if (i > 0 && i % PLAN_STEP_RECORDS === 0) yield;
    const { id, metadata } = records[i];
    if (index.rows.rowOf(id) === undefined && !newIds.has(id)) {
      newIds.add(id);
      heapBytesAdded += rowHeapBytes(id);
    } else {
      heapBytesAdded += LOG_ENTRY_HEAP_BYTES; // a replace leaves a dead entry in the insertion log
      metadataBatch.replaces++;
    }
    // Made once (ahead, or here), checked against the budget, then written as they are.
    const { json, count } = ahead ? { json: ahead.json[i], count: ahead.counts[i] } : measureMetadata(index, metadata);
    metadataJson[i] = json;
    if (json && count) index.metadata.measure(metadataBatch, json, count);
  }
  return { newIds: newIds.size, heapBytesAdded, metadataJson, metadataBatch };
}

/** Each record's ttl and expiry, from `writtenAt` (or its own expiresAt, at most ttlMs later); null when none has a ttl. */
function* planTtls(records: VectorInput[], writtenAt: number, pathOf: PathOf): Generator<void, (RowTtl | null)[] | null, void> {
  let ttls: (RowTtl | null)[] | null = null;
  for (let i = 0; i < records.length; i++) {
    if (i > 0 && i % PLAN_STEP_RECORDS === 0) yield;
    const { ttlMs, expiresAt } = records[i];
    if (ttlMs === undefined) {
      if (expiresAt !== undefined) throw ttlInvalid(pathOf(i) + '/expiresAt', 'expiresAt is taken only with ttlMs');
      continue;
    }
    if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) throw ttlInvalid(pathOf(i) + '/ttlMs', 'ttlMs must be a whole number of milliseconds, at least 1');
    const at = expiresAt ?? writtenAt + ttlMs;
    if (!Number.isFinite(at) || at > writtenAt + ttlMs) throw ttlInvalid(pathOf(i) + '/expiresAt', 'expiresAt must be at most ttlMs after the write');
    ttls ??= new Array<RowTtl | null>(records.length).fill(null);
    ttls[i] = { ttlMs, expiresAt: at };
  }
  return ttls;
}

function ttlInvalid(path: string, message: string) {
  return apiError('VALIDATION_ERROR', message, { issues: [{ path, message }] });
}

/** A record's metadata as the store takes it: its JSON text (null for none or {}) and the filter-index entries it lists (pure: planUpsert, or ahead of the turn). */
export function measureMetadata(index: IndexRead, metadata: Metadata | undefined): { json: JsonText | null; count: EntryCount | null } {
  if (metadata === undefined || isEmpty(metadata)) return { json: null, count: null };
  return { json: jsonText(metadata), count: index.metadata.entriesOf(metadata) };
}

/** The most bytes setting `metadata` on one stored vector can add to the metadata store (for the server's memory budget). */
export function metadataBytesUpper(index: IndexRead, metadata: Metadata): number {
  const batch = MetadataStore.batch();
  batch.replaces = 1;
  if (!isEmpty(metadata)) index.metadata.measure(batch, jsonText(metadata), index.metadata.entriesOf(metadata));
  const size = index.rows.size;
  return index.metadata.growthUpper(batch, size, size);
}

/** 400: a record reached the plan without a vector (texts are embedded before it, by the server; an index alone embeds none). */
function vectorMissing(path: string) {
  return apiError('VALIDATION_ERROR', 'a record needs a vector, or a text the server embeds', {
    issues: [{ path: path + '/vector', message: 'a vector is required here' }],
  });
}

/** Check dimensions, metric and zero vectors for a whole batch; returns the float32 rows. */
function* checkVectors(index: IndexRead, records: VectorInput[], options: UpsertOptions, pathOf: PathOf) {
  const { dimensions, metric, vectorType, dimensionSource } = lockVectorConfig(index.config, options, records[0]?.vector?.length);
  // Float32Arrays (the server's body reader makes them) are used as they
  // are, not copied: the plan only reads them, and no caller changes them
  // before the plan is applied. The rest share one packed allocation.
  let packed: Float32Array | null = null;
  // A plain loop, no closure per record: batches hold up to thousands of
  // records, and the error path is built only for an error.
  const vectors = new Array<Float32Array>(records.length);
  for (let i = 0; i < records.length; i++) {
    if (i > 0 && i % PLAN_STEP_RECORDS === 0) yield;
    const { vector } = records[i];
    if (vector === undefined) throw vectorMissing(pathOf(i));
    if (vector.length !== dimensions) {
      throw apiError('DIMENSION_MISMATCH', `vector has ${vector.length} values; ${dimensionSource} is ${dimensions}`, {
        path: pathOf(i) + '/vector',
        expected: dimensions,
        actual: vector.length,
      });
    }
    let values: Float32Array;
    if (vector instanceof Float32Array) {
      values = vector;
    } else {
      packed ??= new Float32Array(records.length * dimensions);
      values = packed.subarray(i * dimensions, (i + 1) * dimensions);
      values.set(vector);
    }
    if (metric === 'cosine' && isZero(values)) throw zeroVector(pathOf(i) + '/vector');
    vectors[i] = values;
  }
  return { dimensions, metric, vectorType, vectors };
}

/** Check and analyse the records' texts (the analyzer locked, the size limit); the store's growth bound. */
function* prepareTexts(index: IndexRead, records: VectorInput[], options: UpsertOptions, pathOf: PathOf) {
  let analyzer = lockAnalyzer(index.config, options);
  const texts = new Array<PreparedText | null>(records.length);
  let textBytesAdded = 0;
  for (let i = 0; i < records.length; i++) {
    if (i > 0 && i % PLAN_STEP_RECORDS === 0) yield;
    const { text } = records[i];
    if (text === undefined) {
      texts[i] = null;
      continue;
    }
    if (typeof text !== 'string') throw apiError('VALIDATION_ERROR', 'text must be a string', { path: pathOf(i) + '/text' });
    // Measured ahead with the text's analysis when it was (a batch's texts: 32 MiB to scan in the turn otherwise).
    const early = options.preparedTexts?.texts[i];
    const bytes = early ? early.textBytes : utf8Length(text);
    if (bytes > index.maxTextBytes) {
      throw apiError('VALIDATION_ERROR', `text is ${bytes} bytes of UTF-8; the limit is MAX_TEXT_BYTES=${index.maxTextBytes}`, {
        path: pathOf(i) + '/text',
        limit: index.maxTextBytes,
        actual: bytes,
      });
    }
    analyzer ??= analyzerFor(index.config, options);
    const ahead = options.preparedTexts?.analyzer === analyzer ? options.preparedTexts.texts[i] : null;
    const prepared = ahead ?? prepareText(text, analyzer, bytes);
    texts[i] = prepared;
    textBytesAdded += TextStore.upperBytes(prepared);
  }
  if (textBytesAdded > 0) textBytesAdded += TextStore.changeBytesUpper;
  return { texts, analyzer, textBytesAdded };
}

/** In ASCII text, what JSON.stringify escapes: anything but space to DEL, less the quote and the backslash. */
const JSON_ESCAPED = /[^ !#-[\]-\u007f]/;

/** A text as the store writes it: its JSON literal and its terms under `analyzer`. `bytes`: its UTF-8 length. */
export function prepareText(text: string, analyzer: AnalyzerName, bytes = utf8Length(text), terms?: JoinedTerms): PreparedText {
  // UTF-8 is as long as UTF-16 only for ASCII: then the analyzer skips its checks, and the literal is
  // the text between quotes unless it holds a character JSON escapes (made only then).
  const ascii = bytes === text.length;
  const quoted = ascii && !JSON_ESCAPED.test(text);
  const literal = quoted ? text : JSON.stringify(text);
  const literalBytes = quoted ? text.length + 2 : ascii ? literal.length : utf8Length(literal);
  return { literal, quoted, literalBytes, textBytes: bytes, terms: terms ?? termBytes(analyzer, text, ascii) };
}

export function isEmpty(metadata: Metadata): boolean {
  for (const key in metadata) if (Object.hasOwn(metadata, key)) return false;
  return true;
}
