// A search's query texts analysed before its turn, a text at a time with a
// pause between: a text is at most maxQueryTextBytes (4 KiB of Cyrillic,
// the slowest script, analyse in ~1.5 ms), so no slice holds the event loop
// for long however many texts a search-many carries. The turn takes the
// terms as they are (SearchOptions.queryTerms) unless the session's analyzer
// changed meanwhile (its first text, or a reset), when it analyses the texts
// again in one step: at most maxQueryTextBytesPerRequest, ~23 ms.
import { distinctTerms } from '../index/text/analyzer.js';
import type { QueryTerms } from '../index/types.js';
import type { SessionWork } from './session.js';
import { REQUEST_SLICE_MS, Slices } from '../limits/slices.js';

/** Each of `texts`' distinct terms under the analyzer the session's index would search them with now. */
export async function queryTermsAhead(session: SessionWork, texts: readonly string[], sliceMs = REQUEST_SLICE_MS): Promise<QueryTerms> {
  const analyzer = session.index.queryAnalyzer;
  const terms: string[][] = [];
  const slices = new Slices(sliceMs, { waitBehind: true, owner: session.tokenHash });
  for (const text of texts) {
    await slices.pause();
    terms.push(distinctTerms(analyzer, text));
  }
  return { analyzer, terms };
}
