// Metadata filters: parsing and validation into a small tree.
//
// A filter is an object. Each key is either a field path or a logical
// operator ($and, $or, $not); all keys must match. A field's value is either
//   - a plain value: equality (a scalar also matches an array field that
//     contains it; an object or array matches a deeply equal field), or
//   - an operator object, every key an operator:
//     $eq $ne $gt $gte $lt $lte $in $nin $exists.
// A path "a.b" addresses nested metadata (metadata.a.b, also through arrays
// of objects) as well as a key literally named "a.b".
// Meaning of each node: see filter-match.ts. Bad parts are VALIDATION_ERROR
// with the JSON Pointer of the part.

import { SPEC_LIMITS } from '../config.js';
import { apiError, pointer } from '../errors.js';
import { matchNode } from './filter-match.js';
import type { Filter, FilterNode, Metadata } from './filter-types.js';
import { isObject } from './json-value.js';

export type { Filter, FilterNode, Metadata } from './filter-types.js';

const FIELD_OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists'];
const LOGICAL_OPERATORS = ['$and', '$or', '$not'];

function invalid(message: string, path: string): never {
  throw apiError('VALIDATION_ERROR', message, { path });
}

/** Parse and validate a filter; `at` is the JSON Pointer of the filter in the request. */
export function parseFilter(filter: Filter, at = '/filter'): FilterNode {
  return parseObject(filter, at, 0);
}

function parseObject(filter: unknown, at: string, depth: number): FilterNode {
  if (!isObject(filter)) invalid('must be a filter object', at);
  if (depth > SPEC_LIMITS.maxFilterDepth) invalid(`filters nest at most ${SPEC_LIMITS.maxFilterDepth} levels`, at);
  // Own keys only: "__proto__" and friends are plain data here.
  const nodes = Object.keys(filter).map((key) => {
    const path = at + pointer(key);
    if (key.startsWith('$')) return parseLogical(key, filter[key], path, depth);
    return parseField(key, filter[key], path);
  });
  return nodes.length === 1 ? nodes[0] : { kind: 'and', nodes };
}

function parseLogical(op: string, operand: unknown, at: string, depth: number): FilterNode {
  if (op === '$not') return { kind: 'not', node: parseObject(operand, at, depth + 1) };
  if (op === '$and' || op === '$or') {
    if (!Array.isArray(operand) || operand.length === 0) invalid(`${op} takes a non-empty array of filter objects`, at);
    const nodes = operand.map((sub, i) => parseObject(sub, `${at}/${i}`, depth + 1));
    return { kind: op === '$and' ? 'and' : 'or', nodes };
  }
  return invalid(`unknown operator ${op} (allowed here: ${LOGICAL_OPERATORS.join(' ')}; on a field: ${FIELD_OPERATORS.join(' ')})`, at);
}

/** An object value is an operator object when any key starts with "$"; then all must be operators. */
function parseField(path: string, value: unknown, at: string): FilterNode {
  if (!isObject(value) || !Object.keys(value).some((k) => k.startsWith('$'))) return { kind: 'eq', path, value };
  const nodes = Object.keys(value).map((op) => parseOperator(path, op, value[op], at + pointer(op)));
  return nodes.length === 1 ? nodes[0] : { kind: 'and', nodes };
}

function parseOperator(path: string, op: string, operand: unknown, at: string): FilterNode {
  switch (op) {
    case '$eq':
      return { kind: 'eq', path, value: operand };
    case '$ne':
      return { kind: 'not', node: { kind: 'eq', path, value: operand } };
    case '$in':
    case '$nin': {
      if (!Array.isArray(operand)) invalid(`${op} takes an array of values`, at);
      const any: FilterNode = { kind: 'or', nodes: operand.map((value) => ({ kind: 'eq', path, value })) };
      return op === '$in' ? any : { kind: 'not', node: any };
    }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      if (typeof operand !== 'number' && typeof operand !== 'string') invalid(`${op} takes a number or a string`, at);
      return { kind: 'range', path, op, value: operand };
    case '$exists':
      if (typeof operand !== 'boolean') invalid('$exists takes true or false', at);
      return { kind: 'exists', path, value: operand };
    default:
      if (op.startsWith('$')) invalid(`unknown field operator ${op} (allowed: ${FIELD_OPERATORS.join(' ')}; $and $or $not go at the top of a filter)`, at);
      return invalid(`an operator object cannot also hold the field "${op}"; compare whole objects with $eq`, at);
  }
}

/** A predicate over metadata; throws VALIDATION_ERROR for a bad filter. */
export function compileFilter(filter: Filter): (metadata: Metadata) => boolean {
  const node = parseFilter(filter);
  return (metadata) => matchNode(node, metadata);
}
