// What a filter means, evaluated on one vector's metadata. This is the
// definition the metadata index (metadata-index.ts) must agree with; the
// index only makes it faster.
//
// Values at a path: the metadata's own key equal to the path, plus, for an
// own key K with the path starting "K.", the values at the rest of the path
// inside metadata[K] (an object, or each object element of an array).
// Scalars at a path: each value that is a scalar, and each scalar element of
// a value that is an array.

import type { FilterNode, Metadata, RangeOp } from './filter-types.js';
import { isObject, isScalar, jsonEqual } from './json-value.js';

export function valuesAt(object: Record<string, unknown>, path: string, out: unknown[] = []): unknown[] {
  for (const key of Object.keys(object)) {
    const value = object[key];
    if (key === path) out.push(value);
    else if (path.startsWith(key) && path.charCodeAt(key.length) === 46 /* . */) {
      const rest = path.slice(key.length + 1);
      if (isObject(value)) valuesAt(value, rest, out);
      else if (Array.isArray(value)) for (const item of value) if (isObject(item)) valuesAt(item, rest, out);
    }
  }
  return out;
}

export function scalarsAt(object: Record<string, unknown>, path: string): unknown[] {
  const out: unknown[] = [];
  for (const value of valuesAt(object, path)) {
    if (Array.isArray(value)) {
      for (const item of value) if (isScalar(item)) out.push(item);
    } else if (isScalar(value)) out.push(value);
  }
  return out;
}

export function compareRange(op: RangeOp, field: unknown, operand: number | string): boolean {
  if (typeof field !== typeof operand) return false;
  const a = field as number | string;
  switch (op) {
    case '$gt':
      return a > operand;
    case '$gte':
      return a >= operand;
    case '$lt':
      return a < operand;
    default:
      return a <= operand;
  }
}

/** Equality: a field equal to the value, or an array field containing it. */
function equals(metadata: Metadata, path: string, expected: unknown): boolean {
  if (isScalar(expected)) return scalarsAt(metadata, path).includes(expected);
  return valuesAt(metadata, path).some((field) => jsonEqual(field, expected) || (Array.isArray(field) && field.some((item) => jsonEqual(item, expected))));
}

export function matchNode(node: FilterNode, metadata: Metadata): boolean {
  switch (node.kind) {
    case 'and':
      return node.nodes.every((n) => matchNode(n, metadata));
    case 'or':
      return node.nodes.some((n) => matchNode(n, metadata));
    case 'not':
      return !matchNode(node.node, metadata);
    case 'eq':
      return equals(metadata, node.path, node.value);
    case 'range':
      return scalarsAt(metadata, node.path).some((s) => compareRange(node.op, s, node.value));
    case 'exists':
      return valuesAt(metadata, node.path).length > 0 === node.value;
  }
}
