// What a filter means, evaluated on one vector's metadata. This is the
// definition the metadata index (metadata-index.ts) must agree with; the
// index only makes it faster.
//
// Values at a path: the metadata's own key equal to the path, plus, for an
// own key K with the path starting "K.", the values at the rest of the path
// inside metadata[K] (an object, or each object element of an array).
// Scalars at a path (what a range compares, and what a scalar equals): each
// value that is a scalar, and each scalar element of a value that is an array.

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
  return equalsAmong(valuesAt(metadata, path), expected);
}

/** Equality among `values` (valuesAt's answer for the path). */
export function equalsAmong(values: unknown[], expected: unknown): boolean {
  if (isScalar(expected)) return values.some((field) => field === expected || (Array.isArray(field) && field.includes(expected)));
  return values.some((field) => jsonEqual(field, expected) || (Array.isArray(field) && field.some((item) => jsonEqual(item, expected))));
}

/** A range among `values` (valuesAt's answer for the path): a scalar of them, or of an array of them, in it. */
export function rangeAmong(values: unknown[], op: RangeOp, operand: number | string): boolean {
  for (const field of values) {
    if (Array.isArray(field)) {
      for (const item of field) if (compareRange(op, item, operand)) return true;
    } else if (compareRange(op, field, operand)) return true;
  }
  return false;
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
      return rangeAmong(valuesAt(metadata, node.path), node.op, node.value);
    case 'exists':
      return valuesAt(metadata, node.path).length > 0 === node.value;
  }
}
