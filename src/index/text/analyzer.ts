// The analyzers: text to the terms the inverted index keys. Environment-free
// (the browser SDK bundles it) and the same tokens in every engine we run in:
// nothing here reads an ICU dictionary, whose content differs by version.
//
// standard:
//   1. NFKC, lower case (String#toLowerCase: no full case folding, so "ß"
//      stays "ß"), U+2019 as an apostrophe, the colon and variation
//      selectors as spaces / nothing; then diacritics folded (NFD, the
//      combining marks U+0300-U+036F dropped, NFC): "Été" -> "ete".
//   2. Words by Unicode word segmentation (UAX #29, Intl.Segmenter), as
//      Lucene's StandardTokenizer: hyphens split ("wi-fi" -> "wi", "fi"),
//      apostrophes and dots between letters join ("don't", "u.s.a"),
//      numbers keep their separators ("3.14", "1,000"), "_" joins. A colon
//      always splits (UAX #29 lets it join letters, which ICU versions do
//      differently). A word of underscores alone is no token.
//   3. Scripts written without spaces, which ICU splits with a dictionary:
//      Han, Hiragana, Katakana, Hangul (Lucene's CJKBigramFilter) and Thai,
//      Lao, Khmer, Myanmar and the other Southeast Asian scripts: a run of
//      them becomes overlapping bigrams of code points ("東京都" -> "東京",
//      "京都"); a run of one is a unigram.
//   4. Emoji (Extended_Pictographic, regional-indicator flags) are tokens,
//      as in Lucene's StandardTokenizer; a ZWJ sequence is one token.
//   5. A token longer than 255 code units is cut into pieces of 255 (Lucene).
// english: standard, then a trailing "'s" dropped (EnglishPossessiveFilter),
//   Lucene's English stop words dropped, and Porter2 stemming of words of
//   ASCII letters and apostrophes.
//
// Intl.Segmenter costs about 1.5 us a word, so text is split at whitespace
// (always a word boundary) and a piece of ASCII goes through asciiWords, a
// transcription of UAX #29's rules for ASCII that a randomized test proves
// equal to the segmenter's.

import { stem } from 'porter2';
import type { AnalyzerName } from '../../config.js';

export type { AnalyzerName } from '../../config.js';

/** Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET. */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'is',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'the',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
]);

/** Lucene's StandardTokenizer.DEFAULT_MAX_TOKEN_LENGTH. */
export const MAX_TOKEN_CHARS = 255;

/** The terms of `text` under analyzer `name`, in order, repeats kept. */
export function analyze(name: AnalyzerName, text: string): string[] {
  const out: string[] = [];
  standardTokens(text, out);
  return name === 'english' ? english(out) : out;
}

/** A query text's distinct terms under analyzer `name`, in the order of their first use. */
export function distinctTerms(name: AnalyzerName, text: string): string[] {
  return [...new Set(analyze(name, text))];
}

/** standard's tokens by the segmenter alone (no split at whitespace, no ASCII fast path), for the test that proves them equal. */
export function segmenterWords(text: string): string[] {
  const out: string[] = [];
  segmentedWords(normalized(text), out);
  return cutLong(out, 0);
}

/** The ASCII fast path alone: the words of an ASCII `text` (lower case, no colon: normalized). */
export function asciiWords(text: string, out: string[] = []): string[] {
  scanAscii(text, (start, end) => {
    out.push(text.slice(start, end));
  });
  return out;
}

/**
 * Byte ranges of 64 KiB chunks, never handed out twice: a batch's term bytes
 * take an ArrayBuffer a chunk, not one a text (each of which costs the
 * collector); a chunk lives while a range of it is held.
 */
class ByteChunks {
  private chunk = new Uint8Array(0);
  private used = 0;

  /** `length` bytes, zeroed. */
  take(length: number): Uint8Array {
    if (this.used + length > this.chunk.length) {
      this.chunk = new Uint8Array(Math.max(CHUNK_BYTES, length));
      this.used = 0;
    }
    this.used += length;
    return this.chunk.subarray(this.used - length, this.used);
  }

  /** Of the range take() gave last (`taken` bytes), keep the first `kept`; the rest goes back. */
  keep(taken: Uint8Array, kept: number): Uint8Array {
    this.used -= taken.length - kept;
    return taken.subarray(0, kept);
  }
}

const CHUNK_BYTES = 64 * 1024;
const chunks = new ByteChunks();

/**
 * A text's terms under `name` as UTF-8, joined by "\n" (no term holds
 * whitespace), and how many: what the inverted index reads. Standard ASCII
 * text goes from its characters to these bytes with no string per term.
 * `ascii`: the caller knows `text` is ASCII.
 */
export function termBytes(name: AnalyzerName, text: string, ascii = !NON_ASCII.test(text)): { bytes: Uint8Array; count: number } {
  const folded = ascii ? asciiNormalized(text) : normalized(text);
  if (ascii || !NON_ASCII.test(folded)) return asciiTermBytes(folded, name === 'english');
  return joinedBytes(analyze(name, text));
}

/** Characters of a long non-ASCII text analysed between two pauses (termBytesSteps): 4 KiB of Cyrillic, about a millisecond. */
export const ANALYSIS_PIECE_CHARS = 2048;

/**
 * termBytes() with a pause after every piece of about ANALYSIS_PIECE_CHARS
 * of a long non-ASCII text (32 KiB of Cyrillic is ~10 ms in one piece): the
 * text is cut just after an ASCII whitespace, where nothing the analyzer
 * does looks across (normalisation composes no character with whitespace,
 * a final sigma is decided by the letters up to it, words split there), so
 * the pieces' terms are the whole text's. ASCII text, fast, is one piece.
 */
export function* termBytesSteps(name: AnalyzerName, text: string, ascii = !NON_ASCII.test(text)): Generator<void, { bytes: Uint8Array; count: number }, void> {
  if (ascii || text.length <= ANALYSIS_PIECE_CHARS) return termBytes(name, text, ascii);
  const terms: string[] = [];
  for (let start = 0; start < text.length; ) {
    const end = pieceEnd(text, start + ANALYSIS_PIECE_CHARS);
    const piece = analyze(name, text.slice(start, end));
    for (const term of piece) terms.push(term);
    start = end;
    if (start < text.length) yield;
  }
  return joinedBytes(terms);
}

/** Just after the first ASCII whitespace at or after `from` (the text's end when there is none). */
function pieceEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) if (ASCII_WHITESPACE[text.charCodeAt(i)] === 1) return i + 1;
  return text.length;
}

/** Tab, line feed, vertical tab, form feed, carriage return and space: WHITESPACE's characters. */
const ASCII_WHITESPACE = new Uint8Array(128);
for (const c of [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20]) ASCII_WHITESPACE[c] = 1;

/** Terms as termBytes gives them: UTF-8 joined by newlines, and how many. */
function joinedBytes(terms: string[]): { bytes: Uint8Array; count: number } {
  const joined = terms.join('\n');
  const taken = chunks.take(3 * joined.length);
  return { bytes: chunks.keep(taken, utf8Out.encodeInto(joined, taken).written), count: terms.length };
}

const utf8Out = new TextEncoder();

/** termBytes of a normalized ASCII `text`; `english`: each piece through englishTerm (whose stems are never longer). */
function asciiTermBytes(text: string, english: boolean): { bytes: Uint8Array; count: number } {
  // Terms and separators take at most the text's length, plus a separator per cut of a long term.
  const bytes = chunks.take(text.length + Math.ceil(text.length / MAX_TOKEN_CHARS) + 1);
  let at = 0,
    count = 0;
  scanAscii(text, (start, end) => {
    for (let from = start; from < end; from += MAX_TOKEN_CHARS) {
      const stop = Math.min(end, from + MAX_TOKEN_CHARS);
      const term = english ? englishTerm(text.slice(from, stop)) : null;
      if (term === '') continue;
      if (count > 0) bytes[at++] = 0x0a;
      if (term === null) for (let i = from; i < stop; i++) bytes[at++] = text.charCodeAt(i);
      else for (let i = 0; i < term.length; i++) bytes[at++] = term.charCodeAt(i);
      count++;
    }
  });
  return { bytes: chunks.keep(bytes, at), count };
}

/** Call `word` with the bounds of each word of an ASCII `text` (normalized), in order. */
function scanAscii(text: string, word: (start: number, end: number) => void): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    let cls = asciiClass(text.charCodeAt(i));
    if (cls > UNDERSCORE) {
      i++;
      continue;
    }
    const start = i;
    let alnum = cls !== UNDERSCORE;
    i++;
    while (i < n) {
      const next = asciiClass(text.charCodeAt(i));
      if (next <= UNDERSCORE) {
        // WB5, WB8-10, WB13a/b: letters, digits and "_" join in any order.
        if (next !== UNDERSCORE) alnum = true;
        cls = next;
        i++;
        continue;
      }
      if (i + 1 >= n || (next !== MID_NUM_LET && next !== MID_NUM)) break;
      const after = asciiClass(text.charCodeAt(i + 1));
      // WB6/7: letter (. or ') letter; WB11/12: digit (. ' , ;) digit.
      const joins = (cls === LETTER && next === MID_NUM_LET && after === LETTER) || (cls === DIGIT && after === DIGIT);
      if (!joins) break;
      cls = after;
      i += 2;
    }
    if (alnum) word(start, i);
  }
}

const LETTER = 0,
  DIGIT = 1,
  UNDERSCORE = 2,
  MID_NUM_LET = 3,
  MID_NUM = 4,
  OTHER = 5;

/** The UAX #29 class of each ASCII code (letters of both cases, as a lookup: the scan's inner loop). */
const ASCII_CLASS = new Uint8Array(128).fill(OTHER);
for (let c = 0; c < 26; c++) ASCII_CLASS[0x61 + c] = ASCII_CLASS[0x41 + c] = LETTER;
for (let c = 0x30; c <= 0x39; c++) ASCII_CLASS[c] = DIGIT;
ASCII_CLASS[0x5f] = UNDERSCORE;
ASCII_CLASS[0x2e] = ASCII_CLASS[0x27] = MID_NUM_LET;
ASCII_CLASS[0x2c] = ASCII_CLASS[0x3b] = MID_NUM;

const asciiClass = (c: number) => ASCII_CLASS[c];

const NON_ASCII = /[\u0080-\uffff]/;
const WHITESPACE = /[\t\n\v\f\r ]+/;
const COLON = /:/g;
/** After NFKC: the right single quotation mark (an apostrophe), variation selectors (dropped). */
const QUOTE = /\u2019/g;
const VARIATION_SELECTORS = /[\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/gu;
const DIACRITICS = /[\u0300-\u036f]/g;
const LETTER_OR_NUMBER = /[\p{L}\p{N}]/u;
/** Every code point a letter or a decimal digit. */
const LETTER_OR_NUMBER_ONLY = /^[\p{L}\p{Nd}]+$/u;
const EMOJI = /[\p{Extended_Pictographic}\u{1f1e6}-\u{1f1ff}]/u;

const asciiNormalized = (text: string) => text.toLowerCase().replace(COLON, ' ');

function normalized(text: string): string {
  if (!NON_ASCII.test(text)) return asciiNormalized(text);
  const folded = text.normalize('NFKC').toLowerCase().replace(QUOTE, "'").replace(COLON, ' ').replace(VARIATION_SELECTORS, '');
  return folded.normalize('NFD').replace(DIACRITICS, '').normalize('NFC');
}

function standardTokens(text: string, out: string[]): void {
  const start = out.length;
  const folded = normalized(text);
  if (!NON_ASCII.test(folded)) {
    asciiWords(folded, out);
  } else {
    for (const piece of folded.split(WHITESPACE)) {
      if (NON_ASCII.test(piece)) segmentedWords(piece, out);
      else asciiWords(piece, out);
    }
  }
  cutLong(out, start);
}

/** out, its tokens from `start` longer than MAX_TOKEN_CHARS cut into pieces. */
function cutLong(out: string[], start: number): string[] {
  for (let i = start; i < out.length; i++) {
    if (out[i].length > MAX_TOKEN_CHARS) out.splice(i, 1, ...pieces(out[i]));
  }
  return out;
}

/** A long token cut into pieces of at most MAX_TOKEN_CHARS code units, never inside a surrogate pair. */
function pieces(token: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < token.length; ) {
    let end = Math.min(token.length, i + MAX_TOKEN_CHARS);
    const last = token.charCodeAt(end - 1);
    if (end < token.length && last >= 0xd800 && last < 0xdc00) end--;
    out.push(token.slice(i, end));
    i = end;
  }
  return out;
}

let segmenter: Intl.Segmenter | null = null;

/** Words of normalized `text`: bigram-script runs as bigrams, the rest by Intl.Segmenter. */
function segmentedWords(text: string, out: string[]): void {
  let runStart = 0,
    bigramRun = false;
  let i = 0;
  const flush = (end: number) => {
    if (end <= runStart) return;
    const run = text.slice(runStart, end);
    if (bigramRun) bigrams(run, out);
    else segmenterPass(run, out);
  };
  while (i < text.length) {
    const code = text.codePointAt(i)!;
    const isBigram = isBigramScript(code);
    if (isBigram !== bigramRun) {
      flush(i);
      runStart = i;
      bigramRun = isBigram;
    }
    i += code > 0xffff ? 2 : 1;
  }
  flush(text.length);
}

/**
 * A run of letters and digits of Latin, Greek and Cyrillic alone: UAX #29
 * breaks none of it (ALetter and Numeric on both sides of every pair,
 * test/index/text/analyzer-segmenter.test.ts checks each pair), so it is one
 * word without the segmenter. Each segment() call leaves an ICU break
 * iterator for the GC to free: per word of a 32 KiB Cyrillic text, the
 * frees held the event loop 50 ms at a time (bench:adversary).
 */
const SIMPLE_WORD_CHARS = /^[0-9A-Za-z\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u024F\u0386\u0388-\u03FF\u0400-\u0481\u048A-\u052F]+$/;

/** Whether `text` is such a run: the segmenter would answer it whole, as one word. */
export const isSimpleWord = (text: string) => SIMPLE_WORD_CHARS.test(text) && LETTER_OR_NUMBER_ONLY.test(text);

// Not the few that are letters too (Ⓜ, 🅰): the segmenter takes those as words, and drops them.
const PICTOGRAPH = /^(?!\p{Alphabetic})\p{Extended_Pictographic}$/u;

/**
 * One pictograph alone (a word of one emoji): one code point is one segment,
 * which the segmenter keeps as an emoji (test/index/text/analyzer-segmenter.test.ts
 * checks every one). 64 query texts of single emoji held a neighbour 47 ms
 * in the break iterators' frees.
 */
export const isLonePictograph = (text: string) => text.length <= 2 && PICTOGRAPH.test(text);

function segmenterPass(text: string, out: string[]): void {
  if (isSimpleWord(text) || isLonePictograph(text)) {
    out.push(text);
    return;
  }
  bySegmenter(text, out);
}

/** Words by Intl.Segmenter: word-like segments with a letter or digit, and emoji. */
export function bySegmenter(text: string, out: string[]): void {
  segmenter ??= new Intl.Segmenter('und', { granularity: 'word' });
  for (const { segment, isWordLike } of segmenter.segment(text)) {
    if (isWordLike ? LETTER_OR_NUMBER.test(segment) : EMOJI.test(segment)) out.push(segment);
  }
}

function bigrams(run: string, out: string[]): void {
  const chars = Array.from(run);
  if (chars.length === 1) out.push(chars[0]);
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
}

/**
 * Code points of the scripts bigrammed, as fixed ranges (not \p{Script}, whose
 * data moves with the engine's Unicode version): Hangul Jamo, Thai, Lao,
 * Myanmar, Khmer, Tai Le, New Tai Lue, Khmer Symbols, Tai Tham, CJK radicals
 * to Hangul (U+2E80-U+D7FF, punctuation U+3000-U+303F and the other symbol
 * blocks aside), compatibility ideographs, Myanmar and Tai Viet extensions,
 * Ahom, and the ideographs of planes 2 and 3.
 */
function isBigramScript(c: number): boolean {
  if (c < 0x0e00) return false;
  if (c < 0x3000) {
    return (
      c <= 0x0eff ||
      (c >= 0x1000 && c <= 0x109f) ||
      (c >= 0x1100 && c <= 0x11ff) ||
      (c >= 0x1780 && c <= 0x17ff) ||
      (c >= 0x1950 && c <= 0x1aaf) ||
      (c >= 0x2e80 && c <= 0x2fdf)
    );
  }
  if (c < 0xa000) {
    return (
      (c >= 0x3005 && c <= 0x3007) ||
      (c >= 0x3021 && c <= 0x3029) ||
      (c >= 0x3031 && c <= 0x3035) ||
      (c >= 0x3038 && c <= 0x303c) ||
      (c >= 0x3041 && c <= 0x30ff && c !== 0x30fb) ||
      (c >= 0x3131 && c <= 0x318e) ||
      (c >= 0x31f0 && c <= 0x31ff) ||
      (c >= 0x3400 && c <= 0x4dbf) ||
      c >= 0x4e00
    );
  }
  return (
    (c >= 0xa960 && c <= 0xa97f) ||
    (c >= 0xa9e0 && c <= 0xa9ff) ||
    (c >= 0xaa60 && c <= 0xaadf) ||
    (c >= 0xac00 && c <= 0xd7ff) ||
    (c >= 0xf900 && c <= 0xfaff) ||
    (c >= 0x11700 && c <= 0x1174f) ||
    (c >= 0x20000 && c <= 0x323af)
  );
}

const STEMMABLE = /^[a-z']+$/;

/**
 * Stems of recent words (a stem costs ~300 ns; most words of a text are
 * common ones), in two generations: when the young one is full it becomes
 * the old one, and a word found only in the old one moves back to the young,
 * so the common words stay however many rare ones pass.
 */
let youngStems = new Map<string, string>();
let oldStems = new Map<string, string>();
const STEMS_PER_GENERATION = 16_384;

function stemOf(word: string): string {
  let out = youngStems.get(word);
  if (out !== undefined) return out;
  out = oldStems.get(word) ?? (STEMMABLE.test(word) ? stem(word) : word);
  if (youngStems.size === STEMS_PER_GENERATION) {
    oldStems = youngStems;
    youngStems = new Map();
  }
  youngStems.set(word, out);
  return out;
}

/** A standard token under english: its stem, or '' for none (a stop word). */
function englishTerm(token: string): string {
  const word = token.endsWith("'s") ? token.slice(0, -2) : token;
  return word === '' || ENGLISH_STOP_WORDS.has(word) ? '' : stemOf(word);
}

function english(tokens: string[]): string[] {
  const out: string[] = [];
  for (const token of tokens) {
    const term = englishTerm(token);
    if (term !== '') out.push(term);
  }
  return out;
}
