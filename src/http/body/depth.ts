// Step 5: a nesting limit, checked before anything recursive (the validators, JSON.stringify) sees the body.
import { apiError, pointer } from '../../errors.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { NestingScan, opensAtMost } from '../../schemas/json-nesting.js';
import { firstTooDeep } from '../../schemas/json-shape.js';

/** Bytes of a body scanned for its nesting in one turn (about a millisecond). */
const SCAN_SLICE_BYTES = 1024 * 1024;

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

/**
 * The body's bytes, or, when its brackets nest deeper than `maxDepth`, a copy
 * pruned below it (json-nesting.ts): parsed, it fails assertBodyDepth at the
 * same path, and nothing of its depth is built (JSON.parse of 32 MiB nested
 * 16M deep takes seconds). A large body is scanned in slices, each in a turn.
 */
export async function prunedBodyIfTooDeep(bytes: Buffer, maxDepth: number): Promise<Buffer> {
  if (opensAtMost(bytes, maxDepth)) return bytes;
  const scan = new NestingScan(maxDepth);
  for (let start = 0; start < bytes.length; start += SCAN_SLICE_BYTES) {
    if (start > 0) await nextTurn();
    scan.scan(bytes, start, Math.min(bytes.length, start + SCAN_SLICE_BYTES));
  }
  return scan.tooDeep ? scan.pruned() : bytes;
}
