// The form a text's terms wait in for their write (analyzer.ts termBytes
// writes it, TextIndex.addSteps reads it).

/**
 * A text's terms in order (repeats kept) as UTF-8 joined by "\n" (no term
 * holds whitespace), and how many (analyzer.ts termBytes): a batch's texts
 * wait for their write as bytes, not as arrays of strings (which would
 * outlive the young generation and slow every collection).
 */
export interface JoinedTerms {
  readonly bytes: Uint8Array;
  readonly count: number;
}

const NEWLINE = 0x0a;

/** Where the term of joined terms `bytes` starting at `start` ends (a newline, or the end). */
export function termEnd(bytes: Uint8Array, start: number): number {
  let end = start;
  while (end < bytes.length && bytes[end] !== NEWLINE) end++;
  return end;
}
