// The log records of an add or an import, made from the plan the write turn
// applies: rows as the plan holds them, metadata as the JSON text the index
// stores. Bytes encoded ahead of the turn (encodeUpsert, encodeImport) are
// written only when the turn's plan is made at the same index version from
// the same records, so it is the same plan.
import type { UpsertPlan, VectorInput } from '../../index/types.js';
import { encodeRows, encodeRowsInSlices, sealRecord, typeOf, type Allocate, type RowSource, type RowsHead } from './records-v2.js';
import type { Slices } from '../../limits/slices.js';

/** Records per import part: keeps each part far below the framing's size cap, however large the import. */
export const RECORDS_PER_IMPORT_PART = 1000;

/** An add's record, with sequence `sequence` (in a buffer from `allocate`: a ScratchBuffer's when it is written at once). */
export function upsertRecord(plan: UpsertPlan, at: number, sequence: number, allocate?: Allocate): Buffer {
  return encodeRows({ t: 'upsert', ...planHead(plan, at) }, planRows(plan, 0, plan.records.length), sequence, allocate);
}

/** About the bytes of a plan's log records: rows, metadata JSON, ids and texts (their UTF-16 length: a lower bound for UTF-8). */
export function planBytes(plan: UpsertPlan): number {
  let bytes = plan.records.length * plan.dimensions * 4;
  for (let i = 0; i < plan.records.length; i++) {
    bytes += plan.records[i].id.length + (plan.metadataJson[i]?.bytes ?? 0);
    const text = plan.texts[i];
    if (text) bytes += text.literal.length;
  }
  return bytes;
}

/** Records up to this size are made in a ScratchBuffer; larger ones in a buffer of their own. */
const SCRATCH_MAX_BYTES = 1024 * 1024;

/**
 * One buffer reused for the records that are written as soon as they are
 * made and never kept (an add's, in its write turn): a fresh 54 KB buffer per
 * add-many of 100 x 128 cost its page faults and garbage, about a fifth of
 * the encoding.
 */
export class ScratchBuffer {
  private buffer = Buffer.alloc(0);
  private readonly maxBytes: number;

  /** `writtenAtOnce`: records larger than this are written in pieces (kept over turns of the event loop), never made here. */
  constructor(writtenAtOnce = SCRATCH_MAX_BYTES) {
    this.maxBytes = Math.min(SCRATCH_MAX_BYTES, writtenAtOnce);
  }

  readonly take: Allocate = (size) => {
    if (size > this.maxBytes) return Buffer.allocUnsafeSlow(size);
    if (this.buffer.length < size) this.buffer = Buffer.allocUnsafeSlow(Math.min(this.maxBytes, Math.max(size, 2 * this.buffer.length)));
    return this.buffer.subarray(0, size);
  };
}

/** An import's records (its parts), the first with sequence `sequence`. */
export function importRecords(plan: UpsertPlan, at: number, sequence: number): Buffer[] {
  return importParts(plan, at).map((part, i) => encodeRows(part.head, part.rows, sequence + i));
}

/** An add's record, encoded in slices (the event loop given back between steps of about 1 MiB). */
export async function encodeUpsert(plan: UpsertPlan, at: number, slices: Slices): Promise<EncodedChange> {
  const encoded = await encodeRowsInSlices({ t: 'upsert', ...planHead(plan, at) }, planRows(plan, 0, plan.records.length), 0, slices);
  return encodedChange('upsert', plan, at, [encoded]);
}

/** An import's records, a part at a time, each in slices. */
export async function encodeImport(plan: UpsertPlan, at: number, slices: Slices): Promise<EncodedChange> {
  const parts = [];
  for (const part of importParts(plan, at)) {
    parts.push(await encodeRowsInSlices(part.head, part.rows, 0, slices));
    // A part smaller than an encoding step never yields inside: the event loop may be due its turn between parts.
    await slices.pause();
  }
  return encodedChange('import', plan, at, parts);
}

/** The records of `encoded`, if it holds `plan`'s, sealed with sequences from `sequence` on; else null. */
export function sealedFor(encoded: EncodedChange | undefined, kind: EncodedChange['kind'], plan: UpsertPlan, sequence: number): Buffer[] | null {
  if (encoded?.kind !== kind || encoded.version !== plan.version || encoded.records !== plan.records || !sameTtls(encoded.ttls, plan.ttls)) return null;
  encoded.bytes.forEach((bytes, i) => {
    sealRecord(bytes, typeOf(bytes), sequence + i, encoded.payloadCrcs[i]);
  });
  return encoded.bytes;
}

/**
 * A change's log records, encoded ahead of the write turn that applies it,
 * for the plan made at index `version` from `records`: written only if the
 * plan of the turn is made at the same version from the same records (then
 * it is the same plan).
 */
export interface EncodedChange {
  kind: 'upsert' | 'import';
  at: number;
  version: number;
  records: readonly VectorInput[];
  /** The plan's ttls (its records' expiries, from the write's time). */
  ttls: UpsertPlan['ttls'];
  /** The records, sealed again with their sequences when written; each payload's CRC-32 kept for that. */
  bytes: Buffer[];
  payloadCrcs: number[];
}

function encodedChange(kind: EncodedChange['kind'], plan: UpsertPlan, at: number, encoded: { record: Buffer; payloadCrc: number }[]): EncodedChange {
  return {
    kind,
    at,
    version: plan.version,
    records: plan.records,
    ttls: plan.ttls,
    bytes: encoded.map((e) => e.record),
    payloadCrcs: encoded.map((e) => e.payloadCrc),
  };
}

/** Whether two plans give their records the same ttls and expiries. */
function sameTtls(a: UpsertPlan['ttls'], b: UpsertPlan['ttls']): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  return a.every((ttl, i) => ttl?.ttlMs === b[i]?.ttlMs && ttl?.expiresAt === b[i]?.expiresAt);
}

function planHead(plan: UpsertPlan, at: number): RowsHead {
  return { at, dimensions: plan.dimensions, metric: plan.metric, vectorType: plan.vectorType, analyzer: plan.analyzer, embedding: plan.embedding };
}

/** Rows [from, to) of a plan, as encodeRows reads them (metadata as the JSON text the index stores). */
function planRows(plan: UpsertPlan, from: number, to: number): RowSource {
  return {
    count: to - from,
    id: (i) => plan.records[from + i].id,
    vector: (i) => plan.vectors[from + i],
    metadata: (i) => plan.metadataJson[from + i]?.text ?? null,
    // A text section only when a row has a text: its JSON string literal, as the index stores it.
    text: hasText(plan, from, to) ? (i) => textLiteral(plan.texts[from + i]) : undefined,
    // A ttl section only when a record has a ttl: each one's ttlMs and absolute expiry, so a replay expires it at the same instant.
    ttl: plan.ttls ? (i) => plan.ttls![from + i] : undefined,
  };
}

/** A prepared text as the JSON string literal the index stores (a `quoted` one is the text itself, with nothing to escape). */
function textLiteral(text: UpsertPlan['texts'][number]): string | null {
  if (text === null) return null;
  return text.quoted ? `"${text.literal}"` : text.literal;
}

function hasText(plan: UpsertPlan, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (plan.texts[i] !== null) return true;
  return false;
}

/** An import's parts of RECORDS_PER_IMPORT_PART rows: each one's head and rows. */
function importParts(plan: UpsertPlan, at: number) {
  const parts = Math.max(1, Math.ceil(plan.records.length / RECORDS_PER_IMPORT_PART));
  return Array.from({ length: parts }, (_, part) => {
    const from = part * RECORDS_PER_IMPORT_PART;
    return {
      head: { t: 'import' as const, part, parts, ...planHead(plan, at) },
      rows: planRows(plan, from, Math.min(plan.records.length, from + RECORDS_PER_IMPORT_PART)),
    };
  });
}
