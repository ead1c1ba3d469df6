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
// with the JSON Pointer of the part. The nodes of the parsed tree (each field
// condition, each element of $in/$nin, each $and/$or/$not and the implicit
// "and" of several keys) are counted, so a filter's cost is bounded by
// maxFilterNodes whatever the shape of its JSON.

import { SPEC_LIMITS } from '../config.js';
import { ApiError, apiError, pointer } from '../errors.js';
import { matchNode } from './filter-match.js';
import type { Filter, FilterNode, Metadata } from './filter-types.js';
import { isObject } from './json-value.js';

export type { Filter, FilterNode, Metadata } from './filter-types.js';

const FIELD_OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists'];
const LOGICAL_OPERATORS = ['$and', '$or', '$not'];

function invalid(message: string, path: string): never {
  throw apiError('VALIDATION_ERROR', message, { path });
}

/** The message of a filter past maxFilterNodes (the request schemas report it too). */
export const filterNodesMessage = (limit: number) =>
  `the filter has more than ${limit} nodes (maxFilterNodes: each field condition, each element of $in/$nin, each $and/$or/$not and each of their clauses counts)`;

/** The parse of one filter: where nodes are counted. */
class Parse {
  nodes = 0;
  constructor(readonly maxNodes: number) {}

  /** Count `n` new nodes made for the part at `at`. */
  count(n: number, at: string): void {
    this.nodes += n;
    if (this.nodes > this.maxNodes) throw filterTooLarge(this.maxNodes, at);
  }
}

function filterTooLarge(limit: number, at: string) {
  return apiError('VALIDATION_ERROR', filterNodesMessage(limit), { path: at, limit: 'maxFilterNodes', maxFilterNodes: limit });
}

/**
 * Parse and validate a filter; `at` is the JSON Pointer of the filter in the
 * request. More than `maxNodes` nodes is VALIDATION_ERROR naming maxFilterNodes
 * (the request schemas check it with the configured limit before any index is read).
 */
export function parseFilter(filter: Filter, at = '/filter', maxNodes = Number.POSITIVE_INFINITY): FilterNode {
  return parseObject(filter, at, 0, new Parse(maxNodes));
}

/**
 * The JSON Pointer (within `filter`) of the part where its nodes pass
 * `limit`, or null when they do not (a filter bad otherwise is left to the
 * index's parse to report).
 */
export function nodesPastLimit(filter: Filter, limit: number): string | null {
  try {
    parseObject(filter, '', 0, new Parse(limit));
    return null;
  } catch (err) {
    return err instanceof ApiError && err.details?.limit === 'maxFilterNodes' ? String(err.details.path) : null;
  }
}

function parseObject(filter: unknown, at: string, depth: number, parse: Parse): FilterNode {
  if (!isObject(filter)) invalid('must be a filter object', at);
  if (depth > SPEC_LIMITS.maxFilterDepth) invalid(`filters nest at most ${SPEC_LIMITS.maxFilterDepth} levels`, at);
  // Own keys only: "__proto__" and friends are plain data here.
  const keys = Object.keys(filter);
  if (keys.length > 1) parse.count(1, at);
  const nodes = keys.map((key) => {
    const path = at + pointer(key);
    if (key.startsWith('$')) return parseLogical(key, filter[key], path, depth, parse);
    return parseField(key, filter[key], path, parse);
  });
  return nodes.length === 1 ? nodes[0] : { kind: 'and', nodes };
}

function parseLogical(op: string, operand: unknown, at: string, depth: number, parse: Parse): FilterNode {
  if (op === '$not') {
    parse.count(1, at);
    return { kind: 'not', node: parseObject(operand, at, depth + 1, parse) };
  }
  if (op === '$and' || op === '$or') {
    if (!Array.isArray(operand) || operand.length === 0) invalid(`${op} takes a non-empty array of filter objects`, at);
    parse.count(1, at);
    const nodes = operand.map((sub, i) => parseObject(sub, `${at}/${i}`, depth + 1, parse));
    return { kind: op === '$and' ? 'and' : 'or', nodes };
  }
  return invalid(`unknown operator ${op} (allowed here: ${LOGICAL_OPERATORS.join(' ')}; on a field: ${FIELD_OPERATORS.join(' ')})`, at);
}

/** An object value is an operator object when any key starts with "$"; then all must be operators. */
function parseField(path: string, value: unknown, at: string, parse: Parse): FilterNode {
  if (!isObject(value) || !Object.keys(value).some((k) => k.startsWith('$'))) {
    parse.count(1, at);
    return { kind: 'eq', path, value };
  }
  const ops = Object.keys(value);
  if (ops.length > 1) parse.count(1, at);
  const nodes = ops.map((op) => parseOperator(path, op, value[op], at + pointer(op), parse));
  return nodes.length === 1 ? nodes[0] : { kind: 'and', nodes };
}

function parseOperator(path: string, op: string, operand: unknown, at: string, parse: Parse): FilterNode {
  switch (op) {
    case '$eq':
      parse.count(1, at);
      return { kind: 'eq', path, value: operand };
    case '$ne':
      parse.count(2, at);
      return { kind: 'not', node: { kind: 'eq', path, value: operand } };
    case '$in':
    case '$nin': {
      if (!Array.isArray(operand)) invalid(`${op} takes an array of values`, at);
      parse.count(op === '$in' ? 1 : 2, at);
      // Counted element by element, so the pointer names the first one past the limit.
      const nodes = operand.map((value, i): FilterNode => {
        parse.count(1, `${at}/${i}`);
        return { kind: 'eq', path, value };
      });
      const any: FilterNode = { kind: 'or', nodes };
      return op === '$in' ? any : { kind: 'not', node: any };
    }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      if (typeof operand !== 'number' && typeof operand !== 'string') invalid(`${op} takes a number or a string`, at);
      parse.count(1, at);
      return { kind: 'range', path, op, value: operand };
    case '$exists':
      if (typeof operand !== 'boolean') invalid('$exists takes true or false', at);
      parse.count(1, at);
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
