// The inverted index of a VectorIndex's texts, all in typed arrays: a term
// dictionary (ByteDictionary, keyed by the term's UTF-8 bytes) and, per term,
// a posting list of (document id, term count) pairs, varint-coded in byte
// slices (PostingSlices). Per document: its row, its length in terms, and the
// seq of its write (ties go by insertion order), and its distinct terms
// (DocumentTerms), so a delete walks them instead of analysing the text again.
//
// Document ids, not rows, are what the postings hold, so a delete's move of
// the last row into the hole changes two words, not every posting of the
// moved text. A deleted document's postings stay behind, dead (its row reads
// -1), while df, N and the total length drop at once; once the dead entries
// outnumber the live ones, a compaction rewrites every posting list without
// them and numbers the live documents from 0 again, in steps
// (afterChangeSteps, text-compaction.ts).
//
// BM25 as Lucene >= 8 scores it (BM25Similarity, no (k1 + 1) factor):
//   idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))
//   score(d) = sum over distinct query terms t in d of
//              idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))
// N: documents with at least one term; avgdl: their mean length; dl and tf
// exact (Lucene rounds dl into a byte; we do not). Every document holding a
// query term is scored, in float64.

import type { RowBitmap } from '../bitmap.js';
import { ByteDictionary, hashBytes } from '../metadata/byte-dictionary.js';
import { grown } from '../metadata/typed-arrays.js';
import { DocumentTerms } from './document-terms.js';
import { type JoinedTerms, termEnd } from './joined-terms.js';
import { PostingSlices } from './posting-slices.js';
import { type CompactedText, type CompactionSource, compactedSteps, NO_DOC, renumberedSteps } from './text-compaction.js';
import { topRows } from './top-rows.js';
import { runSteps } from '../../limits/steps.js';

/** A search's scratch: a score per row (0 when untouched), and the rows touched. */
interface Scratch {
  scores: Float64Array;
  touched: Int32Array;
}

/** A document's ranked hits, best first: rows and BM25 scores, and how many documents matched. */
export interface TextHits {
  rows: Int32Array;
  scores: Float64Array;
  /** Documents holding at least one query term that passed the filter. */
  matched: number;
}

const utf8 = new TextEncoder();

export interface Bm25Parameters {
  k1: number;
  b: number;
}

/** Dead postings tolerated before a compaction, beyond as many as there are live ones. */
const COMPACT_SLACK = 64 * 1024;
/** Postings (or documents, or rows) a compaction copies between two pauses: about a millisecond. */
const COMPACT_STEP = 64 * 1024;
/** Terms of a long text looked up between two pauses of its add (addSteps): about a millisecond of new ones. */
const ADD_STEP = 4096;

export class TextIndex {
  private readonly dictionary = new ByteDictionary();
  /** Per term: live documents holding it, and postings in its list (dead ones too). */
  private df = new Uint32Array(16);
  private entryCount = new Uint32Array(16);
  /** Per term: the last add that listed it (each lists a term once), and its count in the text being added. */
  private listedBy = new Uint32Array(16);
  private countIn = new Uint32Array(16);
  private stamp = 0;
  /** The distinct terms of the text being added or dropped. */
  private textTerms = new Int32Array(64);
  private postings = new PostingSlices();
  /** Per document: its row (-1 once deleted), its length in terms, its write's seq. */
  private rowOfDoc = new Int32Array(16);
  private lengthOf = new Uint32Array(16);
  private seqOf = new Float64Array(16);
  private termsOf = new DocumentTerms();
  private docTop = 0;
  /** Per row: its document, or -1 (no text, or a text without terms). */
  private docOfRow = new Int32Array(16).fill(NO_DOC);
  private key = new Uint8Array(1024);
  /** Search scratch: a score per row, and the rows touched. */
  private scores = new Float64Array(0);
  private touched = new Int32Array(0);
  /** A search paused between its terms (searchSteps) holds the scratch: another one meanwhile takes scratch of its own. */
  private scratchBusy = false;
  /** A posting list read out (search, compaction). */
  private readonly list = { docs: new Uint32Array(0), tfs: new Uint32Array(0) };
  /** Documents with at least one term (BM25's N), and the sum of their lengths. */
  docCount = 0;
  totalLength = 0;
  private liveEntries = 0;
  private deadEntries = 0;
  /** Postings of the lists of terms gone (bytes of the pool no list reads). */
  private deadListEntries = 0;
  /** The new postings of a compaction under way (counted in byteLength), or null. */
  private compacting: PostingSlices | null = null;

  /**
   * `compactSlack`: dead postings (or document ids) tolerated beyond as many
   * live ones (tests make it 0); `compactStep`: postings a compaction copies
   * between two pauses; `addStep`: terms an add looks up between two pauses
   * (tests make both small).
   */
  constructor(
    private readonly compactSlack = COMPACT_SLACK,
    private readonly compactStep = COMPACT_STEP,
    private readonly addStep = ADD_STEP,
  ) {}

  /** Bytes of the typed arrays held. */
  get byteLength(): number {
    return (
      this.dictionary.byteLength +
      this.df.byteLength +
      this.entryCount.byteLength +
      this.listedBy.byteLength +
      this.countIn.byteLength +
      this.textTerms.byteLength +
      this.postings.byteLength +
      this.rowOfDoc.byteLength +
      this.lengthOf.byteLength +
      this.seqOf.byteLength +
      this.termsOf.byteLength +
      this.docOfRow.byteLength +
      this.key.byteLength +
      this.scores.byteLength +
      this.touched.byteLength +
      this.list.docs.byteLength +
      this.list.tfs.byteLength +
      (this.compacting?.byteLength ?? 0)
    );
  }

  /** Distinct terms held. */
  get termCount(): number {
    return this.dictionary.size;
  }

  /** Whether `row` has a document (a text with at least one term). */
  has(row: number): boolean {
    return row < this.docOfRow.length && this.docOfRow[row] !== NO_DOC;
  }

  /** Index `terms` (a text's, in order, repeats kept) as the document of `row` (which has none), written at `seq`. */
  add(row: number, terms: JoinedTerms, seq: number): void {
    runSteps(this.addSteps(row, terms, seq));
  }

  /**
   * add() with a pause after every `addStep` terms looked up (32 KiB of
   * Cyrillic is ~3,200 new terms, milliseconds). The document is written
   * at the end, in one step; until then nothing else may change the index
   * (its caller holds the session's turn; another add meanwhile throws).
   * Left unfinished, it writes no document; the new terms it met stay in
   * the dictionary with none.
   */
  *addSteps(row: number, terms: JoinedTerms, seq: number): Generator<void, void, void> {
    if (terms.count === 0) return;
    const stamp = this.nextStamp();
    let distinct = 0;
    const bytes = terms.bytes;
    for (let start = 0, end = 0, looked = 1; start < bytes.length; start = end + 1, looked++) {
      end = termEnd(bytes, start);
      const length = end - start;
      // The per-term arrays full: doubled an array a step before a new term needs them.
      if (this.dictionary.idLimit >= this.countIn.length) yield* this.ensureTermsSteps(this.dictionary.idLimit + 1);
      const hash = hashBytes(bytes, length, start);
      let id = this.dictionary.find(bytes, length, hash, start);
      if (id < 0) id = this.newTerm(bytes, length, hash, start);
      if (this.listedBy[id] === stamp) this.countIn[id]++;
      else {
        this.listedBy[id] = stamp;
        this.countIn[id] = 1;
        if (distinct === this.textTerms.length) this.textTerms = grown(this.textTerms, distinct + 1);
        this.textTerms[distinct++] = id;
      }
      if (looked % this.addStep !== 0) continue;
      yield;
      if (this.stamp !== stamp) throw new Error('another text was added while an add was paused');
    }
    this.writeDocument(row, terms.count, seq, distinct);
  }

  /** The document of `row`: `length` terms, written at `seq`, its `distinct` terms and their counts in textTerms and countIn. */
  private writeDocument(row: number, length: number, seq: number, distinct: number): void {
    const doc = this.docTop++;
    if (doc >= this.rowOfDoc.length) {
      this.rowOfDoc = grown(this.rowOfDoc, doc + 1);
      this.lengthOf = grown(this.lengthOf, doc + 1);
      this.seqOf = grown(this.seqOf, doc + 1);
    }
    this.ensureRows(row + 1);
    this.rowOfDoc[doc] = row;
    this.lengthOf[doc] = length;
    this.seqOf[doc] = seq;
    this.docOfRow[row] = doc;
    this.docCount++;
    this.totalLength += length;
    for (let i = 0; i < distinct; i++) {
      const id = this.textTerms[i];
      this.postings.append(id, doc, this.countIn[id]);
      this.entryCount[id]++;
      this.df[id]++;
    }
    this.termsOf.add(doc, this.textTerms, distinct);
    this.liveEntries += distinct;
  }

  /** Drop the document of `row`: a walk over its distinct terms, its text not analysed again. */
  remove(row: number): void {
    if (!this.has(row)) return;
    const doc = this.docOfRow[row];
    this.docOfRow[row] = NO_DOC;
    this.rowOfDoc[doc] = NO_DOC;
    this.docCount--;
    this.totalLength -= this.lengthOf[doc];
    const { ids, read } = this.termsOf.read(doc, this.textTerms);
    this.textTerms = ids;
    for (let i = 0; i < read; i++) {
      const id = ids[i];
      this.liveEntries--;
      if (--this.df[id] > 0) {
        this.deadEntries++;
        continue;
      }
      // Its last live document gone: the term goes now (its list's bytes stay until a compaction).
      this.deadEntries -= this.entryCount[id] - 1;
      this.deadListEntries += this.entryCount[id];
      this.entryCount[id] = 0;
      this.dictionary.remove(id);
    }
  }

  /** The document of row `from` is now that of row `to` (a delete moved the last row into a hole; `to` has none). */
  move(from: number, to: number): void {
    if (!this.has(from)) return;
    const doc = this.docOfRow[from];
    this.docOfRow[from] = NO_DOC;
    this.ensureRows(to + 1);
    this.docOfRow[to] = doc;
    this.rowOfDoc[doc] = to;
  }

  /** After a change to an index of `rowCount` rows: compact when dead postings or document ids outnumber live ones. */
  afterChange(rowCount: number): void {
    runSteps(this.afterChangeSteps(rowCount));
  }

  /**
   * afterChange() with a pause after every `compactStep` postings (or
   * documents, or rows) a compaction copies. Until it is done the index must
   * be neither read nor changed (its caller holds the session's turn); one
   * left unfinished changes nothing.
   */
  *afterChangeSteps(rowCount: number): Generator<void, void, void> {
    if (this.docCount === 0 && this.docTop > 0) this.clear();
    else if (this.compactionDue()) yield* this.compactSteps(rowCount);
  }

  /** Whether dead postings or document ids outnumber live ones (beyond the slack): afterChange() would compact. */
  compactionDue(): boolean {
    return this.deadEntries + this.deadListEntries > this.liveEntries + this.compactSlack || this.docTop > 2 * this.docCount + this.compactSlack;
  }

  clear(): void {
    Object.assign(this, new TextIndex(this.compactSlack, this.compactStep, this.addStep));
  }

  /**
   * The BM25 top `k` among the documents holding one of `terms` (distinct;
   * unknown ones add nothing) and, with a filter, in `filter`; scores below
   * `threshold` left out, and the row `exclude`; ties by the seq of the
   * write, earlier first. `rowCount`: rows of the index.
   */
  search(
    terms: readonly string[],
    rowCount: number,
    k: number,
    params: Bm25Parameters,
    filter: RowBitmap | null,
    threshold = -Infinity,
    exclude = -1,
  ): TextHits {
    return runSteps(this.searchSteps(terms, rowCount, k, params, filter, threshold, exclude));
  }

  /** search() a term at a time: a pause may come after each term's postings (a 4 KiB query text may hold 700 terms of thousands of postings each). */
  *searchSteps(
    terms: readonly string[],
    rowCount: number,
    k: number,
    params: Bm25Parameters,
    filter: RowBitmap | null,
    threshold = -Infinity,
    exclude = -1,
  ): Generator<void, TextHits, void> {
    const scratch = this.takeScratch(rowCount);
    const { scores, touched } = scratch;
    const rowOfDoc = this.rowOfDoc,
      lengthOf = this.lengthOf;
    const n = this.docCount,
      avgdl = this.totalLength / n;
    // tf + k1 * (1 - b + b * dl / avgdl) = tf + base + perLength * dl
    const base = params.k1 * (1 - params.b),
      perLength = (params.k1 * params.b) / avgdl;
    let matched = 0;
    const words = filter?.words;
    try {
      for (const term of terms) {
        const length = this.encode(term);
        const id = this.dictionary.find(this.key, length, hashBytes(this.key, length));
        if (id < 0) continue;
        const df = this.df[id];
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        const count = this.readList(id),
          docs = this.list.docs,
          tfs = this.list.tfs;
        for (let i = 0; i < count; i++) {
          const doc = docs[i],
            row = rowOfDoc[doc];
          if (row < 0 || row === exclude || (words !== undefined && (words[row >>> 5] & (1 << (row & 31))) === 0)) continue;
          const tf = tfs[i];
          if (scores[row] === 0) touched[matched++] = row;
          scores[row] += (idf * tf) / (tf + base + perLength * lengthOf[doc]);
        }
        yield;
      }
      return { ...topRows(scores, touched, matched, k, threshold, this.seqOf, this.docOfRow), matched };
    } finally {
      for (let i = 0; i < matched; i++) scores[touched[i]] = 0;
      this.releaseScratch(scratch);
    }
  }

  /** The index's scratch for a search, grown to `rowCount`; scratch of its own (let go after it) while a paused search holds it. */
  private takeScratch(rowCount: number): Scratch {
    if (this.scratchBusy) return { scores: new Float64Array(rowCount), touched: new Int32Array(rowCount) };
    if (this.scores.length < rowCount) {
      this.scores = new Float64Array(Math.max(rowCount, 2 * this.scores.length));
      this.touched = new Int32Array(this.scores.length);
    }
    this.scratchBusy = true;
    return { scores: this.scores, touched: this.touched };
  }

  private releaseScratch(scratch: Scratch): void {
    if (scratch.scores === this.scores) this.scratchBusy = false;
  }

  /** The seq of the write of the document at `row` (which has one). */
  seqOfRow(row: number): number {
    return this.seqOf[this.docOfRow[row]];
  }

  /** Document frequency of `term` (0 when no document holds it). */
  documentFrequency(term: string): number {
    const length = this.encode(term);
    const id = this.dictionary.find(this.key, length, hashBytes(this.key, length));
    return id < 0 ? 0 : this.df[id];
  }

  /** A compaction (text-compaction.ts) into new arrays, a pause after every `compactStep` copied, the old ones replaced at the end. */
  private *compactSteps(rowCount: number): Generator<void, void, void> {
    const { renumbered, live } = yield* renumberedSteps(this.rowOfDoc, this.docTop, this.compactStep);
    const postings = new PostingSlices();
    this.compacting = postings;
    try {
      const compacted = yield* compactedSteps(this.compactionSource(), renumbered, live, rowCount, postings, this.compactStep);
      this.takeCompacted(postings, compacted);
    } finally {
      this.compacting = null;
    }
  }

  /** What a compaction reads: the index as it is (nothing changes it until the compaction is done). */
  private compactionSource(): CompactionSource {
    return {
      docTop: this.docTop,
      termLimit: this.dictionary.idLimit,
      rowOfDoc: this.rowOfDoc,
      lengthOf: this.lengthOf,
      seqOf: this.seqOf,
      termsOf: this.termsOf,
      docOfRow: this.docOfRow,
      df: this.df,
      readList: (id) => this.readList(id),
      list: this.list,
    };
  }

  /** The swap at a compaction's end: nothing before it changed the index. */
  private takeCompacted(postings: PostingSlices, compacted: CompactedText): void {
    for (let id = 0; id < this.dictionary.idLimit; id++) this.entryCount[id] = this.df[id];
    this.postings = postings;
    this.lengthOf = compacted.lengthOf;
    this.seqOf = compacted.seqOf;
    this.rowOfDoc = compacted.rowOfDoc;
    this.docOfRow = compacted.docOfRow;
    this.termsOf = compacted.termsOf;
    this.docTop = compacted.live;
    this.deadEntries = 0;
    this.deadListEntries = 0;
  }

  /** The postings of term `id` into list.docs and list.tfs; how many. */
  private readList(id: number): number {
    const list = this.list;
    if (list.docs.length < this.entryCount[id]) {
      list.docs = new Uint32Array(Math.max(this.entryCount[id], 2 * list.docs.length));
      list.tfs = new Uint32Array(list.docs.length);
    }
    return this.postings.read(id, list.docs, list.tfs);
  }

  /** Add the term `bytes[start, start + length)` (hash `hash`), in no document yet; its id. */
  private newTerm(bytes: Uint8Array, length: number, hash: number, start: number): number {
    const id = this.dictionary.add(bytes, length, hash, start);
    this.ensureTerms(this.dictionary.idLimit);
    this.df[id] = 0;
    this.entryCount[id] = 0;
    this.postings.start(id);
    return id;
  }

  /** A stamp no term holds yet in listedBy. */
  private nextStamp(): number {
    if (++this.stamp === 0xffffffff) {
      this.listedBy.fill(0);
      this.stamp = 1;
    }
    return this.stamp;
  }

  /** The UTF-8 bytes of `term` into `key`; their length. */
  private encode(term: string): number {
    if (this.key.length < term.length * 3) this.key = new Uint8Array(term.length * 3);
    return utf8.encodeInto(term, this.key).written;
  }

  private ensureTerms(limit: number): void {
    // countIn is grown last: room in it is room in every per-term array.
    if (limit <= this.countIn.length) return;
    runSteps(this.ensureTermsSteps(limit));
  }

  /** Room for term ids below `limit` in every per-term array, a pause after each one grown (each is megabytes at a million terms). */
  private *ensureTermsSteps(limit: number): Generator<void, void, void> {
    // Each array on its own, so one left halfway is finished by the next call.
    if (limit > this.df.length) {
      this.df = grown(this.df, limit);
      yield;
    }
    if (limit > this.entryCount.length) {
      this.entryCount = grown(this.entryCount, limit);
      yield;
    }
    if (limit > this.listedBy.length) {
      this.listedBy = grown(this.listedBy, limit);
      yield;
    }
    if (limit > this.countIn.length) {
      this.countIn = grown(this.countIn, limit);
      yield;
    }
    yield* this.postings.reserveSteps(limit);
  }

  private ensureRows(rows: number): void {
    if (rows > this.docOfRow.length) this.docOfRow = grown(this.docOfRow, rows, NO_DOC);
  }
}
