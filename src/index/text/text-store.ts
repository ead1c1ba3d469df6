// The texts of a VectorIndex's rows: each text's JSON string literal as
// bytes (a MetadataArena record without entries, so answers write it as it
// is) and the inverted index over its terms (TextIndex), kept in step. Rows
// are the index's dense rows; deleting row r moves the last row into r.

import { JsonBytes, type TextJson } from '../metadata/metadata-json.js';
import { MetadataArena } from '../metadata/metadata-arena.js';
import type { JoinedTerms } from './joined-terms.js';
import { TextIndex, type TextHits } from './text-index.js';
import { runSteps } from '../../limits/steps.js';

/** A text checked and analysed by a plan, ready to write. */
export interface PreparedText {
  /** JSON.stringify(text), or, when `quoted`, the text itself (a literal once between quotes: nothing to escape). */
  readonly literal: string;
  readonly quoted: boolean;
  /** UTF-8 bytes of the literal. */
  readonly literalBytes: number;
  /** UTF-8 bytes of the text (so a turn taking it prepared ahead does not measure the text again). */
  readonly textBytes: number;
  readonly terms: JoinedTerms;
}

/** Bytes a term can add at most, beside twice its bytes: its slots in the dictionary and the per-term arrays, each at its emptiest after a doubling. */
const TERM_BYTES_UPPER = 112;
/** Bytes a posting (4 + 2) and its term's id in the document's list (a varint, at most 5) can take: each array at its emptiest after a doubling. */
const POSTING_BYTES_UPPER = 34;
/** A document's row-table and per-document entries (arena 16, index 24), doubled. */
const DOCUMENT_BYTES_UPPER = 80;
/** The largest chunk the arena opens for small records. */
const CHUNK_BYTES_UPPER = 1024 * 1024;
const NO_ENTRIES = new Uint32Array(0);
/** JS heap of a keyword index's objects, beside its arrays' bytes (measured: about 5 to 8 KiB). */
const TEXT_INDEX_HEAP_BYTES = 8 * 1024;

export class TextStore {
  private readonly arena = new MetadataArena();
  /** Made by the first text, so a session without any holds nothing here. */
  private indexOrNull: TextIndex | null = null;
  /** The index's part of sets left for addsSteps(), in order (a sliced write's, a few rows at a time): drop the row's document, add `terms` (null: none). */
  private pending: { row: number; terms: JoinedTerms | null; seq: number }[] = [];

  private get index(): TextIndex {
    if (this.indexOrNull === null) this.indexOrNull = new TextIndex();
    return this.indexOrNull;
  }

  /** Estimated JS heap of the keyword index, once made: its objects and typed arrays' own objects. */
  get heapBytes(): number {
    return this.indexOrNull === null ? 0 : TEXT_INDEX_HEAP_BYTES;
  }

  /** Bytes held: the arena and its row table, the dictionary, the postings, the per-document arrays. */
  get byteLength(): number {
    return this.arena.byteLength + (this.indexOrNull?.byteLength ?? 0);
  }

  /** Bytes of the inverted index alone: dictionary, postings, per-document arrays. */
  get indexByteLength(): number {
    return this.indexOrNull?.byteLength ?? 0;
  }

  /** Distinct terms of the index. */
  get termCount(): number {
    return this.indexOrNull?.termCount ?? 0;
  }

  /** Texts with at least one term (BM25's N). */
  get documentCount(): number {
    return this.indexOrNull?.docCount ?? 0;
  }

  /** TextIndex.search, nothing before the first text. */
  search(...args: Parameters<TextIndex['search']>): TextHits {
    this.addPending();
    return this.indexOrNull?.search(...args) ?? { rows: new Int32Array(0), scores: new Float64Array(0), matched: 0 };
  }

  /** search() a term at a time (TextIndex.searchSteps). */
  *searchSteps(...args: Parameters<TextIndex['search']>): Generator<void, TextHits, void> {
    this.addPending();
    const index = this.indexOrNull;
    return index ? yield* index.searchSteps(...args) : { rows: new Int32Array(0), scores: new Float64Array(0), matched: 0 };
  }

  /** UTF-8 bytes of the stored texts as JSON string literals. */
  get jsonBytes(): number {
    return this.arena.jsonBytes;
  }

  has(row: number): boolean {
    return this.arena.has(row);
  }

  /** UTF-8 bytes of the row's text as a JSON string literal (0 without one). */
  jsonLength(row: number): number {
    return this.arena.has(row) ? this.arena.jsonBytesOf(row).length : 0;
  }

  /** The row's text as its JSON bytes (a view that stays as it is now), or null. */
  json(row: number): TextJson | null {
    return this.arena.has(row) ? new JsonBytes<string>(this.arena.jsonBytesOf(row)) : null;
  }

  /** The most bytes writing `text` can add. */
  static upperBytes(text: PreparedText): number {
    return text.literalBytes + DOCUMENT_BYTES_UPPER + text.terms.count * (TERM_BYTES_UPPER + POSTING_BYTES_UPPER) + 2 * text.terms.bytes.length;
  }

  /** Bytes a change can add however small, besides upperBytes: a new chunk of the arena. */
  static readonly changeBytesUpper = CHUNK_BYTES_UPPER;

  /**
   * Replace the text of `row` with `text` (null: none), written at `seq`.
   * `rowCount`: rows of the index. `later`: its terms are indexed by
   * addsSteps() (a sliced write's), not now. A batch of sets and removes
   * ends with settle().
   */
  set(row: number, text: PreparedText | null, seq: number, rowCount: number, later = false): void {
    if (later && (text !== null || this.arena.has(row))) this.pending.push({ row, terms: text?.terms ?? null, seq });
    this.drop(row, !later);
    if (text !== null) {
      this.arena.write(row, text.literal, text.literalBytes, NO_ENTRIES, 0, text.quoted);
      if (!later) this.index.add(row, text.terms, seq);
    }
    this.afterChange(rowCount);
  }

  /**
   * The index's part of the sets left for later, in their order (so the
   * index ends as set() now would leave it), each text's add with a pause
   * after every bounded step of its terms (TextIndex.addSteps) and after it.
   */
  *addsSteps(): Generator<void, void, void> {
    for (let next = this.pending.shift(); next !== undefined; next = this.pending.shift()) {
      this.indexOrNull?.remove(next.row);
      if (next.terms !== null) yield* this.index.addSteps(next.row, next.terms, next.seq);
      // A step holds one text's terms at most (a text's 4,096th term ends one too).
      if (this.pending.length > 0) yield;
    }
  }

  /** The adds left for later, done now: before anything reads or changes the index otherwise. */
  private addPending(): void {
    runSteps(this.addsSteps());
  }

  /** Delete the text of `row`, moving that of `last` (the index's last row) into it. */
  remove(row: number, last: number): void {
    this.addPending();
    this.drop(row);
    if (row !== last && this.arena.has(last)) {
      this.arena.move(last, row);
      this.indexOrNull?.move(last, row);
    }
    this.afterChange(last);
  }

  /**
   * After a batch of sets and removes: the index compacts if dead postings
   * now outnumber live ones, once for the batch, not at every row (a
   * delete-many of every row would rewrite the postings again and again).
   * Dead postings take no new memory, so nothing is held longer for it.
   */
  settle(rowCount: number): void {
    this.addPending();
    this.indexOrNull?.afterChange(rowCount);
  }

  /** Whether settle() would compact the keyword index now. */
  get compactionDue(): boolean {
    return this.indexOrNull?.compactionDue() ?? false;
  }

  /** settle() with a pause after each bounded step of a compaction (TextIndex.afterChangeSteps): the caller holds the session's turn until it is done. */
  *settleSteps(rowCount: number): Generator<void, void, void> {
    yield* this.addsSteps();
    if (this.indexOrNull) yield* this.indexOrNull.afterChangeSteps(rowCount);
  }

  clear(): void {
    this.arena.clear();
    this.indexOrNull = null;
    this.pending = [];
  }

  /** The row's text gone from the arena and, when `fromIndex`, from the index. */
  private drop(row: number, fromIndex = true): void {
    if (!this.arena.has(row)) return;
    if (fromIndex) this.indexOrNull?.remove(row);
    this.arena.free(row);
  }

  private afterChange(rowCount: number): void {
    if (this.arena.jsonBytes === 0) this.clear();
    else this.arena.compactStep(rowCount);
  }
}
