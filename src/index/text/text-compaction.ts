// A TextIndex's compaction: once dead postings outnumber the live ones,
// every posting list is rewritten without them and the live documents are
// numbered from 0 again. In steps of a bounded number of postings (or
// documents, or rows), building new arrays beside the old ones, which the
// index takes in one swap at the end (TextIndex.afterChangeSteps), so a
// caller holding the session's turn gives the event loop back between steps.

import type { DocumentTerms } from './document-terms.js';
import type { PostingSlices } from './posting-slices.js';

/** A document's row once deleted; a row's document when it has none. */
export const NO_DOC = -1;

/** What a compaction reads of a TextIndex, which nothing changes until it is done. */
export interface CompactionSource {
  /** Document ids given out (live and dead), and the term ids' bound. */
  readonly docTop: number;
  readonly termLimit: number;
  /** Per document: its row (NO_DOC once deleted), its length in terms, its write's seq, its distinct terms. */
  readonly rowOfDoc: Int32Array;
  readonly lengthOf: Uint32Array;
  readonly seqOf: Float64Array;
  readonly termsOf: DocumentTerms;
  /** Per row: its document, or NO_DOC. */
  readonly docOfRow: Int32Array;
  /** Per term: live documents holding it. */
  readonly df: Uint32Array;
  /** The postings of term `id` read into `list`; how many. */
  readList(id: number): number;
  readonly list: { readonly docs: Uint32Array; readonly tfs: Uint32Array };
}

/** The arrays a compaction built, for the index to take in one swap. */
export interface CompactedText {
  readonly lengthOf: Uint32Array<ArrayBuffer>;
  readonly seqOf: Float64Array<ArrayBuffer>;
  readonly rowOfDoc: Int32Array<ArrayBuffer>;
  readonly docOfRow: Int32Array<ArrayBuffer>;
  readonly termsOf: DocumentTerms;
  /** Live documents: the new docTop. */
  readonly live: number;
}

/** Each document's new id (NO_DOC when deleted: live ones numbered 0, 1, ... in their old order), and how many live; a pause after every `step` documents. */
export function* renumberedSteps(rowOfDoc: Int32Array, docTop: number, step: number): Generator<void, { renumbered: Int32Array; live: number }, void> {
  const renumbered = new Int32Array(docTop);
  let live = 0;
  for (let doc = 0; doc < docTop; doc++) {
    renumbered[doc] = rowOfDoc[doc] >= 0 ? live++ : NO_DOC;
    if ((doc + 1) % step === 0) yield;
  }
  return { renumbered, live };
}

/**
 * Every posting list of `source` rewritten into `postings` without dead
 * entries, its documents `renumbered` (so each list stays ascending, no
 * sort), and the per-document arrays cut to the `live` ones: new arrays, a
 * pause after every `step` copied, `source` left as it is.
 */
export function* compactedSteps(
  source: CompactionSource,
  renumbered: Int32Array,
  live: number,
  rowCount: number,
  postings: PostingSlices,
  step: number,
): Generator<void, CompactedText, void> {
  yield* copyLists(source, postings, renumbered, step);
  const size = Math.max(16, live);
  const lengthOf = new Uint32Array(size),
    seqOf = new Float64Array(size),
    rowOfDoc = new Int32Array(size);
  for (let doc = 0; doc < source.docTop; doc++) {
    const to = renumbered[doc];
    if (to >= 0) {
      lengthOf[to] = source.lengthOf[doc];
      seqOf[to] = source.seqOf[doc];
      rowOfDoc[to] = source.rowOfDoc[doc];
    }
    if ((doc + 1) % step === 0) yield;
  }
  const docOfRow = new Int32Array(source.docOfRow.length).fill(NO_DOC);
  for (let row = 0; row < rowCount; row++) {
    if (source.docOfRow[row] !== NO_DOC) docOfRow[row] = renumbered[source.docOfRow[row]];
    if ((row + 1) % step === 0) yield;
  }
  const termsOf = yield* source.termsOf.compactedSteps(renumbered, step);
  return { lengthOf, seqOf, rowOfDoc, docOfRow, termsOf, live };
}

/** Each live term's list into `postings` without its dead entries, its documents renumbered; a pause after every `step` postings read. */
function* copyLists(source: CompactionSource, postings: PostingSlices, renumbered: Int32Array, step: number): Generator<void, void, void> {
  const limit = source.termLimit;
  let copied = 0;
  for (let id = 0; id < limit; id++) {
    if (source.df[id] === 0) continue;
    postings.start(id);
    const count = source.readList(id),
      docs = source.list.docs,
      tfs = source.list.tfs;
    for (let i = 0; i < count; i++) if (renumbered[docs[i]] >= 0) postings.append(id, renumbered[docs[i]], tfs[i]);
    copied += count;
    if (copied >= step) {
      copied = 0;
      yield;
    }
  }
}
