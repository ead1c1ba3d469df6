// Result shaping: a scan's rows and scores as hits, with the metadata and
// texts asked for, and the bytes of those (to size the answer before writing it).
import type { SearchHits } from '../../kernel/search-request.js';
import type { IndexRead } from '../index-read.js';
import type { SearchHit, SearchOptions, SearchStats } from '../types.js';
import type { QuerySteps } from './search-plan.js';

/** Bytes of the metadata and texts of an answer's hits. */
export interface AnswerSizes {
  metadataJsonBytes: number;
  textJsonBytes: number;
}

export const noSizes = (): AnswerSizes => ({ metadataJsonBytes: 0, textJsonBytes: 0 });

/** The hit of `row`, with its metadata and text as asked (their bytes added to `sizes`). */
export function hitOf(index: IndexRead, row: number, score: number, options: SearchOptions, sizes: AnswerSizes): SearchHit {
  const hit: SearchHit = { id: index.rows.idAt(row), score };
  if (options.includeMetadata) {
    hit.metadata = index.metadata.json(row);
    sizes.metadataJsonBytes += index.metadata.jsonLength(row);
  }
  if (options.includeText) {
    hit.text = index.texts.json(row);
    sizes.textJsonBytes += index.texts.jsonLength(row);
  }
  return hit;
}

/** A vector scan's hits as results, a query at a time: ids, scores, metadata, cut at the threshold. */
export function* vectorResults(index: IndexRead, hits: SearchHits, queryCount: number, options: SearchOptions, stats: SearchStats): QuerySteps {
  const sizes = noSizes();
  const threshold = options.scoreThreshold;
  const cosine = index.config.metric === 'cosine';
  const results: SearchHit[][] = [];
  for (let j = 0; j < queryCount; j++) {
    const list: SearchHit[] = [];
    for (let i = 0; i < hits.perQuery; i++) {
      const score = hits.scores[j * hits.perQuery + i];
      // Results come best first: the first one past the threshold ends the list.
      if (threshold !== undefined && (cosine ? !(score >= threshold) : !(score <= threshold))) break;
      list.push(hitOf(index, hits.rows[j * hits.perQuery + i], score, options, sizes));
    }
    results.push(list);
    yield;
  }
  return { results, stats, ...sizes };
}
