// Reads an import (the export format, format.ts) line by line as it
// arrives, validating each line: the header first, then each vector line
// with add-many's record schema. Nothing is applied here; finish() hands
// the whole, checked import to the caller, which applies it in one step.
// Given a measure, the reader keeps each line's metadata as its measured JSON
// text instead of the object: the objects' keys take several times their
// bytes (50,000 lines of 240 keys held over 1 GB until the write), and the
// body's reservation counts bytes, not objects.
// Errors name the line: details.path is the JSON Pointer of the line in the
// body read as an array of lines (0 is the header), details.line its
// 1-based number.
import * as v from 'valibot';
import { apiError, ApiError, pointer } from '../errors.js';
import type { JsonText } from '../index/json-size.js';
import type { EntryCount } from '../index/metadata/metadata-index.js';
import type { Metadata } from '../index/filter.js';
import type { PreparedMetadata, PreparedTexts, UpsertOptions, UpsertPlan, VectorInput } from '../index/types.js';
import type { VectorIndex } from '../index/vector-index.js';
import { runSteps } from '../limits/steps.js';
import type { RequestSchemas } from '../schemas/index.js';
import { firstTooDeep } from '../schemas/json-shape.js';
import { prunedIfTooDeep } from '../schemas/json-nesting.js';
import { requestError } from '../schemas/request-error.js';
import { EXPORT_FORMAT, EXPORT_VERSION, type ExportHeader } from './format.js';
import { LineSplitter } from './lines.js';

export interface ParsedImport {
  header: ExportHeader;
  records: VectorInput[];
  /** JSON Pointer of record i (its line), for errors found when it is applied. */
  pathOf: (i: number) => string;
  /** Its texts analysed ahead of the write turn (the server's import route), if they were. */
  preparedTexts?: PreparedTexts;
  /** Its metadata measured ahead of the write turn (the server's import route), if it was. */
  preparedMetadata?: PreparedMetadata;
}

type ImportSchemas = Pick<RequestSchemas, 'ImportHeaderSchema' | 'ImportRecordSchema'>;

/** A record's metadata as the index takes it (IndexReader.measureMetadata). */
export type MetadataMeasure = (metadata: Metadata | undefined) => { json: JsonText | null; count: EntryCount | null };

/** What one line may be: its bytes (the server's MAX_BODY_BYTES), and the nesting of a metadata object in it (MAX_JSON_DEPTH). */
export interface ImportLineLimits {
  maxLineBytes: number;
  maxJsonDepth: number;
}

const utf8 = new TextDecoder('utf-8');

/** Levels of a vector line around its metadata object: the record. */
const LINE_FRAME_DEPTH = 1;

export class ImportReader {
  private header: ExportHeader | null = null;
  private readonly records: VectorInput[] = [];
  private readonly lineOf: number[] = [];
  private readonly splitter: LineSplitter;
  /** The records' metadata as measured JSON, with a measure. */
  private readonly measured: PreparedMetadata | undefined;

  /** `limits`: none (the page's LocalIndex) reads lines of any length and depth; `measure`: none keeps metadata objects. */
  constructor(
    private readonly schemas: ImportSchemas,
    private readonly limits?: ImportLineLimits,
    private readonly measure?: MetadataMeasure,
  ) {
    this.measured = measure && { json: [], counts: [] };
    this.splitter = new LineSplitter((text, index, bytes) => this.line(text, index, bytes), limits?.maxLineBytes);
  }

  /** The next bytes of the body. */
  push(chunk: Uint8Array): void {
    this.splitter.push(chunk);
  }

  /** The end of the body: the whole import, checked (its lines against the header's count). */
  finish(): ParsedImport {
    this.splitter.end();
    const header = this.header;
    if (!header) throw invalidImport(`the body is empty; an import starts with the header line of a ${EXPORT_FORMAT}`, 0);
    if (this.records.length !== header.count) {
      throw invalidImport(
        `the header announces ${header.count} vectors and the body holds ${this.records.length} (truncated?); nothing was imported`,
        (this.lineOf.at(-1) ?? 0) + 1,
      );
    }
    const lineOf = this.lineOf;
    return { header, records: this.records, pathOf: (i) => pointer(lineOf[i]), preparedMetadata: this.measured };
  }

  private line(text: string, index: number, bytes: Uint8Array): void {
    if (text.trim() === '') return; // blank lines (a trailing newline, say) carry nothing
    const maxDepth = this.limits && LINE_FRAME_DEPTH + this.limits.maxJsonDepth;
    // A line too deep is parsed pruned below the limit: the same error and path, none of its depth built.
    const pruned = maxDepth === undefined ? null : prunedIfTooDeep(bytes, maxDepth);
    const source = pruned ? utf8.decode(pruned) : text;
    let value: unknown;
    try {
      value = JSON.parse(source);
    } catch {
      throw apiError('INVALID_JSON', `line ${index + 1} is not JSON`, { path: pointer(index), line: index + 1 });
    }
    if (maxDepth !== undefined) assertLineDepth(value, index, maxDepth);
    if (!this.header) {
      this.header = this.readHeader(value, index);
      return;
    }
    if (this.records.length === this.header.count) {
      throw invalidImport(`the header announces ${this.header.count} vectors and the body holds more; nothing was imported`, index);
    }
    const result = v.safeParse(this.schemas.ImportRecordSchema, value);
    if (!result.success) throw atLine(requestError(result.issues, `vector line ${index + 1}`), index);
    // An export's expiresAt (ISO 8601) as the ms the index takes.
    const { expiresAt, ...record } = result.output;
    const input: VectorInput = expiresAt === undefined ? record : { ...record, expiresAt: Date.parse(expiresAt) };
    if (this.measure && this.measured) {
      const { json, count } = this.measure(input.metadata);
      this.measured.json.push(json);
      this.measured.counts.push(count);
      delete input.metadata; // the write takes it from its text
    }
    this.records.push(input);
    this.lineOf.push(index);
  }

  private readHeader(value: unknown, index: number): ExportHeader {
    const object = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
    if (object.format !== EXPORT_FORMAT || object.version !== EXPORT_VERSION) {
      throw invalidImport(`the first line must be the header of a ${EXPORT_FORMAT} version ${EXPORT_VERSION} (GET /vectors/export writes it)`, index);
    }
    const result = v.safeParse(this.schemas.ImportHeaderSchema, value);
    if (!result.success) throw atLine(requestError(result.issues, 'header line'), index);
    return result.output as ExportHeader;
  }
}

/** 400 VALIDATION_ERROR at the first value of line `index` nested deeper than `maxDepth`, before any validator walks it (as a body's, http/body/depth.ts). */
function assertLineDepth(value: unknown, index: number, maxDepth: number): void {
  const deep = firstTooDeep(value, maxDepth);
  if (!deep) return;
  const path = pointer(index, ...deep);
  throw apiError('VALIDATION_ERROR', `vector line ${index + 1}: ${path}: nested deeper than ${maxDepth} levels`, {
    issues: [{ path, message: `nested deeper than ${maxDepth} levels` }],
    path,
    line: index + 1,
  });
}

function invalidImport(message: string, index: number): ApiError {
  return apiError('INVALID_IMPORT', message, { path: pointer(index), line: index + 1 });
}

/** A line's schema error, its paths prefixed with the line's pointer. */
function atLine(err: ApiError, index: number): ApiError {
  const details = { ...err.details };
  if (Array.isArray(details.issues)) {
    details.issues = (details.issues as { path: string; message: string }[]).map((issue) => ({ ...issue, path: pointer(index) + issue.path }));
  }
  if (typeof details.path === 'string') details.path = pointer(index) + details.path;
  details.line = index + 1;
  return new ApiError(err.status, err.code, err.message, details);
}

/** The checked plan of an import into `index` (null when it holds no vector: nothing to do). */
export function prepareImport(index: VectorIndex, parsed: ParsedImport): UpsertPlan | null {
  return runSteps(prepareImportSteps(index, parsed));
}

/** prepareImport() in steps (IndexReader.prepareUpsertSteps), for the server's write turn to run in slices. */
export function* prepareImportSteps(index: VectorIndex, parsed: ParsedImport): Generator<void, UpsertPlan | null, void> {
  return parsed.records.length === 0 ? null : yield* index.prepareUpsertSteps(parsed.records, importOptions(parsed));
}

/** The upsert options of an import: its header configures a new session and is checked against a locked one, as add-many's fields are. */
export function importOptions(parsed: ParsedImport): UpsertOptions {
  const { header, preparedTexts, preparedMetadata, pathOf } = parsed;
  const analyzer = header.analyzer ?? undefined;
  const embedding: UpsertOptions = header.embedding ? { embedding: header.embedding } : {};
  if (header.dimensions === null) return { analyzer, ...embedding, preparedTexts, preparedMetadata, pathOf };
  return {
    ...embedding,
    dimensions: header.dimensions,
    metric: header.metric ?? undefined,
    vectorType: header.vectorType,
    analyzer,
    preparedTexts,
    preparedMetadata,
    pathOf,
  };
}
