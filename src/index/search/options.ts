// A search's options resolved once: the topK and candidatePool defaults, and
// the option combinations every kind of search refuses.
import { SPEC_LIMITS } from '../../config.js';
import { apiError } from '../../errors.js';
import type { SearchOptions } from '../types.js';

export interface ResolvedSizes {
  topK: number;
  /** At least topK (one more when each query's own vector is dropped: a search by ids). */
  candidatePool: number;
}

export function resolveSearchOptions(options: SearchOptions, dropsOwn = false): ResolvedSizes {
  const topK = options.topK ?? SPEC_LIMITS.defaultTopK;
  return { topK, candidatePool: Math.max(options.candidatePool ?? SPEC_LIMITS.defaultCandidatePool, topK + (dropsOwn ? 1 : 0)) };
}

export function fusionWithoutBothArms() {
  return apiError('VALIDATION_ERROR', 'fusion applies to a hybrid search: give both query vectors (or ids) and query texts', { path: '/fusion' });
}
