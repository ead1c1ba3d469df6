// The model's tokenizer: the unigram Viterbi of @energetic-ai/embeddings
// (lib/tokenizer.ts), token for token, over vocab.json. The text is NFKC
// normalized, every space becomes U+2581 and one U+2581 is put in front; the
// best split maximises the summed piece scores, a code point no piece starts
// with is the unknown piece (id 0, score 0), and a run of unknowns is one.
// Longer texts are truncated at the model's window: only the first 128 tokens
// count (MODEL.maxTokens, the graph's ClipToMaxLength).
import { MODEL, type Vocabulary } from './weights.js';

const SEPARATOR = '\u2581';
/** vocab.json's first pieces are reserved symbols (unknown, <s>, </s>, extra ids), never matched. */
const RESERVED = 6;
const UNKNOWN = 0;
/** Trie edges are keyed by node * EDGE_BASE + code point (below 2^53 for any vocabulary). */
const EDGE_BASE = 0x110000;

export class Tokenizer {
  /** Child of a node by code point: edges.get(node * EDGE_BASE + codePoint). Node 0 is the root. */
  private readonly edges = new Map<number, number>();
  /** Per node: the vocabulary id of the piece ending there, or -1. */
  private readonly pieceAt: Int32Array;
  /** Per id: its score, and its length in UTF-16 units (what the original steps back by). */
  private readonly scores: Float64Array;
  private readonly units: Int32Array;

  constructor(vocabulary: Vocabulary) {
    this.scores = Float64Array.from(vocabulary, ([, score]) => score);
    this.units = Int32Array.from(vocabulary, ([piece]) => piece.length);
    const pieceAt: number[] = [-1];
    for (let id = RESERVED; id < vocabulary.length; id++) {
      let node = 0;
      for (const symbol of vocabulary[id][0]) {
        const key = node * EDGE_BASE + symbol.codePointAt(0)!;
        let child = this.edges.get(key);
        if (child === undefined) {
          child = pieceAt.length;
          pieceAt.push(-1);
          this.edges.set(key, child);
        }
        node = child;
      }
      pieceAt[node] = id;
    }
    this.pieceAt = Int32Array.from(pieceAt);
  }

  /** The token ids of `text`, at most MODEL.maxTokens; none for the empty text. */
  encode(text: string): number[] {
    const normalized = text.normalize('NFKC');
    if (normalized.length === 0) return [];
    const symbols = codePoints(SEPARATOR + normalized.replaceAll(' ', SEPARATOR));
    const n = symbols.length;
    // best[e]: the best score of a split of symbols[0, e); words[e]: the id of its last piece.
    const best = new Float64Array(n + 1);
    const words = new Int32Array(n + 1);
    // Pieces are relaxed by start position, so each end sees its candidates in the original's order.
    for (let start = 0; start < n; start++) {
      let matched = false;
      let node = 0;
      for (let end = start; end < n; end++) {
        const child = this.edges.get(node * EDGE_BASE + symbols[end]);
        if (child === undefined) break;
        node = child;
        const id = this.pieceAt[node];
        if (id < 0) continue;
        matched = true;
        this.relax(best, words, start, end + 1, id);
      }
      if (!matched) this.relax(best, words, start, start + 1, UNKNOWN);
    }
    return this.backtrack(words).slice(0, MODEL.maxTokens);
  }

  /** The original's rule: a later candidate with an equal score wins, and an end still at 0 takes any. */
  private relax(best: Float64Array, words: Int32Array, start: number, end: number, id: number): void {
    const score = this.scores[id] + best[start];
    if (best[end] === 0 || score >= best[end]) {
      best[end] = score;
      words[end] = id;
    }
  }

  /** The ids from the last piece back, stepping by each piece's UTF-16 length as the original does; runs of unknowns merged. */
  private backtrack(words: Int32Array): number[] {
    const ids: number[] = [];
    for (let at = words.length - 1; at > 0; at -= this.units[words[at]]) {
      const id = words[at];
      if (!(id === UNKNOWN && ids.length > 0 && ids[ids.length - 1] === UNKNOWN)) ids.push(id);
    }
    return ids.reverse();
  }
}

function codePoints(text: string): Int32Array {
  const out = new Int32Array(text.length);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.codePointAt(i)!;
    out[n++] = c;
    if (c > 0xffff) i++;
  }
  return out.subarray(0, n);
}
