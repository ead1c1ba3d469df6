import { apiError, pointer } from '../../src/errors.js';
import { analyzerFor, lockAnalyzer, lockEmbedding, lockVectorConfig } from '../../src/index/config-lock.js';
import type { IndexRead } from '../../src/index/index-read.js';
import { LOG_ENTRY_HEAP_BYTES } from '../../src/index/insertion-order.js';
import { utf8Length, type JsonText } from '../../src/index/json-size.js';
import { MetadataStore } from '../../src/index/metadata/metadata-store.js';
import { rowHeapBytes } from '../../src/index/row-table.js';
import { TextStore, type PreparedText } from '../../src/index/text/text-store.js';
import type { RowTtl } from '../../src/index/row-expiry.js';
import type { UpsertOptions, UpsertPlan, VectorInput } from '../../src/index/types.js';
import { isZero, zeroVector } from '../../src/index/zero-vector.js';
import { measureMetadata, prepareText } from '../../src/index/upsert-plan.js';

type PathOf = (i: number) => string;

/**
 * Check a batch against the index (dimension, metric, zero vectors,
 * capacity) without changing anything; throws the first problem found.
 */
export function planUpsertBefore(index: IndexRead, records: VectorInput[], options: UpsertOptions): UpsertPlan {
  const pathOf = options.pathOf ?? ((i: number) => pointer('vectors', i));
  const { dimensions, metric, vectorType, vectors } = checkVectors(index, records, options, pathOf);
  const { texts, analyzer, textBytesAdded } = prepareTexts(index, records, options, pathOf);
  const size = index.rows.size;
  const newIds = new Set<string>();
  const ahead = options.preparedMetadata?.json.length === records.length ? options.preparedMetadata : undefined;
  const metadataJson = new Array<JsonText | null>(records.length);
  let heapBytesAdded = 0;
  const metadataBatch = MetadataStore.batch();
  for (let i = 0; i < records.length; i++) {
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
  // A replace adds nothing: taken even by an index over a MAX_VECTORS_PER_SESSION lowered since it was filled.
  if (newIds.size > 0 && size + newIds.size > index.maxVectors) {
    throw apiError('CAPACITY_EXCEEDED', `the index holds ${size} of ${index.maxVectors} vectors; this request adds ${newIds.size} more`, {
      maxVectors: index.maxVectors,
      vectorCount: size,
      adding: newIds.size,
    });
  }
  const rowsNeeded = size + newIds.size;
  const ttls = planTtls(records, options.writtenAt ?? index.clock(), pathOf);
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

/** Each record's ttl and expiry, from `writtenAt` (or its own expiresAt, at most ttlMs later); null when none has a ttl. */
function planTtls(records: VectorInput[], writtenAt: number, pathOf: PathOf): (RowTtl | null)[] | null {
  let ttls: (RowTtl | null)[] | null = null;
  for (let i = 0; i < records.length; i++) {
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

/** 400: a record reached the plan without a vector (texts are embedded before it, by the server; an index alone embeds none). */
function vectorMissing(path: string) {
  return apiError('VALIDATION_ERROR', 'a record needs a vector, or a text the server embeds', {
    issues: [{ path: path + '/vector', message: 'a vector is required here' }],
  });
}

/** Check dimensions, metric and zero vectors for a whole batch; returns the float32 rows. */
function checkVectors(index: IndexRead, records: VectorInput[], options: UpsertOptions, pathOf: PathOf) {
  const { dimensions, metric, vectorType, dimensionSource } = lockVectorConfig(index.config, options, records[0]?.vector?.length);
  // Float32Arrays (the server's body reader makes them) are used as they
  // are, not copied: the plan only reads them, and every caller applies it
  // in the same synchronous step. The rest share one packed allocation.
  let packed: Float32Array | null = null;
  // A plain loop, no closure per record: batches hold up to thousands of
  // records, and the error path is built only for an error.
  const vectors = new Array<Float32Array>(records.length);
  for (let i = 0; i < records.length; i++) {
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
function prepareTexts(index: IndexRead, records: VectorInput[], options: UpsertOptions, pathOf: PathOf) {
  let analyzer = lockAnalyzer(index.config, options);
  const texts = new Array<PreparedText | null>(records.length);
  let textBytesAdded = 0;
  for (let i = 0; i < records.length; i++) {
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
