// An upsert's texts analysed before its write turn, a slice at a time (a
// long text in pieces, analyzer.ts termBytesSteps): the
// analysis (tens of microseconds a text) would otherwise run inside the turn
// in one piece, 500 texts holding the event loop for tens of milliseconds
// while other sessions' searches wait. The turn then takes them as they are
// (VectorIndex.prepareUpsert, options.preparedTexts). If the session's
// analyzer changed meanwhile (its first text came in by another request, or
// a reset), the turn would analyse the whole batch again in one piece
// (1,000 texts of 32 KiB: seconds); withTextsAhead() instead leaves the turn,
// analyses them again in slices and takes a new turn, and after
// MAX_TEXT_ANALYSES such changes in a row answers 409 ANALYZER_CHANGED.
import { apiError } from '../errors.js';
import { utf8Length } from '../index/json-size.js';
import { termBytesSteps } from '../index/text/analyzer.js';
import type { PreparedTexts, UpsertOptions, VectorInput } from '../index/types.js';
import { prepareText } from '../index/upsert-plan.js';
import type { VectorIndex } from '../index/vector-index.js';
import type { SessionWork } from './session.js';
import { REQUEST_SLICE_MS, Slices } from '../limits/slices.js';

/** The records' texts analysed with the analyzer they would get now; undefined when none has one. Texts the turn will refuse are left to it. */
export async function prepareTextsAhead(session: SessionWork, records: readonly VectorInput[], options: UpsertOptions): Promise<PreparedTexts | undefined> {
  const { index } = session;
  if (!records.some((record) => typeof record.text === 'string')) return undefined;
  const analyzer = index.textAnalyzerFor(options);
  const texts = new Array<PreparedTexts['texts'][number]>(records.length).fill(null);
  const slices = new Slices(REQUEST_SLICE_MS, { waitBehind: true, owner: session.tokenHash });
  for (let i = 0; i < records.length; i++) {
    const { text } = records[i];
    if (typeof text !== 'string') continue;
    const bytes = utf8Length(text);
    if (bytes <= index.maxTextBytes) {
      // A long text in pieces (32 KiB of Cyrillic is ~10 ms in one).
      texts[i] = prepareText(text, analyzer, bytes, await slices.run(termBytesSteps(analyzer, text, bytes === text.length)));
    }
    await slices.pause();
  }
  return { analyzer, texts };
}

/** Analyses of a write's texts before it gives up, the analyzer having changed before each turn (only the session's own token can change it). */
export const MAX_TEXT_ANALYSES = 3;

/** What a write's turn returns when it found its texts analysed with another analyzer than the session's now (analyzerChanged). */
export const STALE_TEXTS: unique symbol = Symbol('stale texts');

/**
 * Whether `options.preparedTexts` were made with another analyzer than the
 * turn would use now. Not when the turn refuses the analyzer named anyway
 * (ANALYZER_LOCKED).
 */
export function analyzerChanged(index: VectorIndex, options: UpsertOptions): boolean {
  const prepared = options.preparedTexts;
  if (!prepared) return false;
  const locked = index.getConfig().analyzer;
  if (options.analyzer !== undefined && locked !== null && options.analyzer !== locked) return false;
  return index.textAnalyzerFor(options) !== prepared.analyzer;
}

/**
 * `write` with the records' texts analysed ahead; while it answers
 * STALE_TEXTS (its turn found the analyzer changed), analysed again in
 * slices and `write` run anew; 409 ANALYZER_CHANGED after MAX_TEXT_ANALYSES.
 */
export async function withTextsAhead<T>(
  session: SessionWork,
  records: readonly VectorInput[],
  options: UpsertOptions,
  write: (preparedTexts: PreparedTexts | undefined) => Promise<T | typeof STALE_TEXTS>,
): Promise<T> {
  const { index } = session;
  for (let analyses = 1; ; analyses++) {
    const preparedTexts = await prepareTextsAhead(session, records, options);
    const stale = analyzerChanged(index, { ...options, preparedTexts });
    const written = stale ? STALE_TEXTS : await write(preparedTexts);
    if (written !== STALE_TEXTS) return written;
    if (analyses === MAX_TEXT_ANALYSES) throw analyzerChangedError(index.textAnalyzerFor(options));
  }
}

/** 409 ANALYZER_CHANGED: the session's analyzer changed before each of the write's turns; nothing was written. */
function analyzerChangedError(analyzer: string) {
  return apiError(
    'ANALYZER_CHANGED',
    `the session's analyzer changed (a reset, or another request's first text) each time this write's texts were analysed, ${MAX_TEXT_ANALYSES} times; nothing was written, send it again`,
    { analyzer, analyses: MAX_TEXT_ANALYSES },
  );
}
