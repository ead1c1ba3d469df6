// An independent, deliberately naive reading of the filter language, written
// from the README's description rather than from src/index: it interprets
// the raw filter object directly against one metadata object.

type Json = unknown;
const isObj = (x: Json): x is Record<string, Json> => typeof x === 'object' && x !== null && !Array.isArray(x);
const isScalar = (x: Json) => x === null || ['string', 'number', 'boolean'].includes(typeof x);
const same = (a: Json, b: Json) => canonical(a) === canonical(b);
/** JSON text with object keys sorted: equal texts, equal values. */
function canonical(x: Json): string {
  if (Array.isArray(x)) return `[${x.map(canonical).join(',')}]`;
  if (isObj(x)) {
    const keys = Object.keys(x).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(x[k])}`).join(',')}}`;
  }
  return JSON.stringify(x);
}

/** Every value found at a dotted path: try each split of the path into an own key and the rest. */
function lookup(node: Json, path: string): Json[] {
  if (!isObj(node)) return [];
  const found: Json[] = [];
  for (const key of Object.keys(node)) {
    if (key === path) found.push(node[key]);
    if (path.startsWith(key + '.')) {
      const rest = path.slice(key.length + 1);
      const child = node[key];
      const children = Array.isArray(child) ? child : [child];
      for (const c of children) found.push(...lookup(c, rest));
    }
  }
  return found;
}

function candidates(metadata: Json, path: string): Json[] {
  return lookup(metadata, path).flatMap((v) => (Array.isArray(v) ? v.filter(isScalar) : isScalar(v) ? [v] : []));
}

function eq(metadata: Json, path: string, value: Json): boolean {
  if (isScalar(value)) return candidates(metadata, path).some((c) => c === value);
  return lookup(metadata, path).some((v) => same(v, value) || (Array.isArray(v) && v.some((e) => same(e, value))));
}

function cmp(metadata: Json, path: string, op: string, value: Json): boolean {
  return candidates(metadata, path).some((c) => {
    if (typeof c !== typeof value) return false;
    const a = c as number,
      b = value as number;
    return op === '$gt' ? a > b : op === '$gte' ? a >= b : op === '$lt' ? a < b : a <= b;
  });
}

function fieldMatches(metadata: Json, path: string, condition: Json): boolean {
  if (!isObj(condition) || !Object.keys(condition).some((k) => k.startsWith('$'))) return eq(metadata, path, condition);
  return Object.entries(condition).every(([op, operand]) => {
    switch (op) {
      case '$eq':
        return eq(metadata, path, operand);
      case '$ne':
        return !eq(metadata, path, operand);
      case '$in':
        return (operand as Json[]).some((v) => eq(metadata, path, v));
      case '$nin':
        return !(operand as Json[]).some((v) => eq(metadata, path, v));
      case '$exists':
        return lookup(metadata, path).length > 0 === operand;
      default:
        return cmp(metadata, path, op, operand);
    }
  });
}

export function referenceMatches(filter: Record<string, Json>, metadata: Record<string, Json>): boolean {
  return Object.entries(filter).every(([key, value]) => {
    if (key === '$and') return (value as Record<string, Json>[]).every((f) => referenceMatches(f, metadata));
    if (key === '$or') return (value as Record<string, Json>[]).some((f) => referenceMatches(f, metadata));
    if (key === '$not') return !referenceMatches(value as Record<string, Json>, metadata);
    return fieldMatches(metadata, key, value);
  });
}
