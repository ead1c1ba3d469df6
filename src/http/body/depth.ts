// Step 5: a nesting limit, checked before anything recursive (the validators, JSON.stringify) sees the body.
import { apiError, pointer } from '../../errors.js';
import { firstTooDeep } from '../../schemas/json-shape.js';

/** Levels of a body around a metadata object or filter: body, vectors, record (metadata sits at the 4th). */
export const BODY_FRAME_DEPTH = 3;

/** 400 VALIDATION_ERROR at the first value nested deeper than `maxDepth`. */
export function assertBodyDepth(body: unknown, maxDepth: number): void {
  const deep = firstTooDeep(body, maxDepth);
  if (!deep) return;
  const path = pointer(...deep);
  throw apiError('VALIDATION_ERROR', `invalid request body: ${path}: nested deeper than ${maxDepth} levels`, {
    issues: [{ path, message: `nested deeper than ${maxDepth} levels` }],
  });
}
