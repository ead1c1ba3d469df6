// The export format (NDJSON, application/x-ndjson): a header line describing
// the index, then one line per vector in add-many's record shape, in
// insertion order (`text` only on a vector that has one):
//   {"format":"tempvec-export","version":1,"dimensions":384,"metric":"cosine","vectorType":"float32","analyzer":"standard","count":2}
//   {"id":"a","vector":[0.5,-1],"metadata":{},"text":"a chunk"}
// Vectors are JSON numbers (each float32's exact value, printed as a double,
// so it reads back bit for bit) or base64 of little-endian float32 (about 6
// times faster to export and a quarter of the size, bench:ingest). Environment-free: the
// server and the SDK's LocalIndex write and read the same text.
import type { AnalyzerName, EmbeddingModel, Metric, VectorType } from '../config.js';
import type { ExportedVector, IndexConfig, IndexExport } from '../index/types.js';
import { encodeFloat32Base64 } from '../schemas/base64-float32.js';

export const EXPORT_FORMAT = 'tempvec-export';
export const EXPORT_VERSION = 1;
export const NDJSON_TYPE = 'application/x-ndjson';
export const VECTOR_ENCODINGS = ['numbers', 'base64'] as const;
export type VectorEncoding = (typeof VECTOR_ENCODINGS)[number];

export interface ExportHeader {
  format: typeof EXPORT_FORMAT;
  version: typeof EXPORT_VERSION;
  /** null for a session never written to (then count is 0). */
  dimensions: number | null;
  metric: Metric | null;
  vectorType: VectorType;
  /** The texts' analyzer; null (or absent, from a server before keyword search) for a session without text. */
  analyzer?: AnalyzerName | null;
  /** The model that embedded the session's texts; absent (or null) for a session whose vectors were given by the caller. */
  embedding?: EmbeddingModel | null;
  /** Vector lines that follow: an import refuses a body with more or fewer. */
  count: number;
}

export function exportHeader(config: Readonly<IndexConfig>, count: number): ExportHeader {
  const { dimensions, metric, vectorType, analyzer, embedding } = config;
  // Only a session with a model names it: other exports stay as before, readable by servers from before embedding.
  return { format: EXPORT_FORMAT, version: EXPORT_VERSION, dimensions, metric, vectorType, analyzer, ...(embedding ? { embedding } : {}), count };
}

export function headerLine(header: ExportHeader): string {
  return JSON.stringify(header) + '\n';
}

/** One vector's line. */
export function recordLine(record: ExportedVector, encoding: VectorEncoding): string {
  // Pieced together rather than one JSON.stringify: base64 needs no escaping, and is the bulk of the line.
  const vector = encoding === 'base64' ? '"' + encodeFloat32Base64(record.vector) + '"' : JSON.stringify(Array.from(record.vector));
  const text = record.text ? ',"text":' + record.text.json : '';
  // A record with a ttl: its ttlMs and expiresAt, which an import keeps (the record expires at the same instant).
  const ttl = record.expiresAt === undefined ? '' : ',"ttlMs":' + record.ttlMs + ',"expiresAt":"' + new Date(record.expiresAt).toISOString() + '"';
  return '{"id":' + JSON.stringify(record.id) + ',"vector":' + vector + ',"metadata":' + record.metadata.json + text + ttl + '}\n';
}

/** Lines of many vectors, as one string (a chunk of a streamed export). */
export function recordLines(records: readonly ExportedVector[], encoding: VectorEncoding): string {
  let text = '';
  for (const record of records) text += recordLine(record, encoding);
  return text;
}

/** Vectors per chunk of a streamed export. */
export const EXPORT_BATCH = 256;

/** The whole export as one string (the SDK's LocalIndex; the server streams it chunk by chunk instead). */
export function exportText(exp: IndexExport, encoding: VectorEncoding): string {
  const chunks = [headerLine(exportHeader(exp.config, exp.count))];
  try {
    for (let batch = exp.next(EXPORT_BATCH); batch.length > 0; batch = exp.next(EXPORT_BATCH)) chunks.push(recordLines(batch, encoding));
  } finally {
    exp.close();
  }
  return chunks.join('');
}
