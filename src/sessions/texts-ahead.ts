// An upsert's texts analysed before its write turn, a slice at a time: the
// analysis (tens of microseconds a text) would otherwise run inside the turn
// in one piece, 500 texts holding the event loop for tens of milliseconds
// while other sessions' searches wait. The turn then takes them as they are
// (VectorIndex.prepareUpsert, options.preparedTexts), unless the session's
// analyzer changed meanwhile (its first text came in by another request, or
// a reset), when it analyses them again.
import { utf8Length } from '../index/json-size.js';
import { prepareText, type PreparedTexts, type UpsertOptions, type VectorIndex, type VectorInput } from '../index/vector-index.js';
import { Slices } from '../limits/slices.js';

/** Longest a slice of analysis holds the event loop: shorter than Slices' default, as a neighbour's search waits behind it. */
const SLICE_MS = 2;

/** The records' texts analysed with the analyzer they would get now; undefined when none has one. Texts the turn will refuse are left to it. */
export async function prepareTextsAhead(index: VectorIndex, records: readonly VectorInput[], options: UpsertOptions): Promise<PreparedTexts | undefined> {
  if (!records.some((record) => typeof record.text === 'string')) return undefined;
  const analyzer = index.textAnalyzerFor(options);
  const texts = new Array<PreparedTexts['texts'][number]>(records.length).fill(null);
  const slices = new Slices(SLICE_MS);
  for (let i = 0; i < records.length; i++) {
    const { text } = records[i];
    if (typeof text !== 'string') continue;
    const bytes = utf8Length(text);
    if (bytes <= index.maxTextBytes) texts[i] = prepareText(text, analyzer, bytes);
    await slices.pause();
  }
  return { analyzer, texts };
}
