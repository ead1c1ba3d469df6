// The error a request that fails its schema gets: BATCH_TOO_LARGE when a
// batch array is longer than its cap, else VALIDATION_ERROR with every
// issue's JSON Pointer. Environment-free: the server's body validation and
// the SDK's local index answer the same codes and details from it.
import type * as v from 'valibot';
import { apiError, pointer, type ApiError } from '../errors.js';

/** Arrays whose maxLength is a batch cap: exceeding it is BATCH_TOO_LARGE. */
const BATCH_FIELDS = new Set(['vectors', 'ids', 'queryVectors', 'texts']);

function issuePath(issue: v.BaseIssue<unknown>): string {
  return pointer(...(issue.path ?? []).map((item) => item.key as string | number));
}

/** The ApiError for a failed safeParse of a request; `what` names the input in the message. */
export function requestError(issues: readonly v.BaseIssue<unknown>[], what = 'request body'): ApiError {
  const batch = issues.find((issue) => issue.type === 'max_length' && issue.path?.length === 1 && BATCH_FIELDS.has(String(issue.path[0].key)));
  if (batch) {
    const field = String(batch.path![0].key);
    return apiError('BATCH_TOO_LARGE', `${field} holds ${(batch.input as unknown[]).length} items; the limit is ${batch.requirement}`, {
      path: pointer(field),
      limit: batch.requirement,
      actual: (batch.input as unknown[]).length,
    });
  }
  const list = issues.slice(0, 20).map((issue) => ({ path: issuePath(issue), message: issue.message }));
  return apiError('VALIDATION_ERROR', `invalid ${what}: ${list[0].path || '/'}: ${list[0].message}`, { issues: list });
}
