// Shape limits of parsed JSON: nesting depth and key counts. Iterative, so a
// body nested a million levels deep is measured without recursion (the
// validators, JSON.stringify and the filter matcher all recurse, and only see
// values that passed these checks).

import { CheckedBatch } from './checked-batch.js';

/** Levels of a checked batch without other fields: the array, its records, their vectors. */
const PLAIN_BATCH_DEPTH = 3;

export type JsonPath = (string | number)[];

/** A container to visit; its path is rebuilt from the parent links only when it is reported. */
interface Frame {
  value: unknown;
  depth: number;
  parent: Frame | null;
  key: string | number;
}

function pathOf(frame: Frame): JsonPath {
  const path: JsonPath = [];
  for (let f: Frame | null = frame; f?.parent; f = f.parent) path.push(f.key);
  return path.reverse();
}

/** Depth of a container: {} and [] are 1, {"a":{}} is 2; a scalar is 0. */
export function firstTooDeep(value: unknown, maxDepth: number): JsonPath | null {
  const stack: Frame[] = [{ value, depth: value !== null && typeof value === 'object' ? 1 : 0, parent: null, key: '' }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { value: current, depth } = frame;
    if (depth > maxDepth) return pathOf(frame);
    if (current === null || typeof current !== 'object') continue;
    // A typed array (a vector read straight into float32) holds only numbers.
    if (ArrayBuffer.isView(current)) continue;
    // A batch the body reader checked is an array of records: without other
    // fields, as deep as that shape says (no walk over its thousands of
    // records); else each record as JSON.parse would make it.
    if (current instanceof CheckedBatch) {
      if (!current.otherFields && depth - 1 + PLAIN_BATCH_DEPTH <= maxDepth) continue;
      for (let i = 0; i < current.records.length; i++) stack.push({ value: current.recordAt(i), depth: depth + 1, parent: frame, key: i });
      continue;
    }
    // Arrays by index, without an entry pair per element: a body holds
    // hundreds of thousands of vector components, and only containers matter.
    if (Array.isArray(current)) {
      for (let i = 0; i < current.length; i++) {
        const child: unknown = current[i];
        if (child !== null && typeof child === 'object') stack.push({ value: child, depth: depth + 1, parent: frame, key: i });
      }
      continue;
    }
    for (const key of Object.keys(current)) {
      const child = (current as Record<string, unknown>)[key];
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: depth + 1, parent: frame, key });
    }
  }
  return null;
}

/**
 * Keys of `value` and of every object nested in it. Stops counting past
 * `limit` and returns the path of the object whose keys passed it, else null.
 * Containers only are visited (a frame each, no copy of their entries).
 */
export function firstOverKeyLimit(value: unknown, limit: number): JsonPath | null {
  let count = 0;
  const stack: Frame[] = [{ value, depth: 0, parent: null, key: '' }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const current = frame.value;
    if (current === null || typeof current !== 'object') continue;
    if (Array.isArray(current)) {
      for (let i = 0; i < current.length; i++) {
        const child: unknown = current[i];
        if (child !== null && typeof child === 'object') stack.push({ value: child, depth: 0, parent: frame, key: i });
      }
      continue;
    }
    // Own keys only: keys like "__proto__" are data, never the prototype.
    for (const key of Object.keys(current)) {
      if (++count > limit) return pathOf(frame);
      const child = (current as Record<string, unknown>)[key];
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: 0, parent: frame, key });
    }
  }
  return null;
}
