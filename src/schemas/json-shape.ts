// Shape limits of parsed JSON: nesting depth and key counts. Iterative, so a
// body nested a million levels deep is measured without recursion (the
// validators, JSON.stringify and the filter matcher all recurse, and only see
// values that passed these checks).

export type JsonPath = (string | number)[];

interface Frame {
  value: unknown;
  depth: number;
  path: JsonPath;
}

/** Depth of a container: {} and [] are 1, {"a":{}} is 2; a scalar is 0. */
export function firstTooDeep(value: unknown, maxDepth: number): JsonPath | null {
  const stack: Frame[] = [{ value, depth: value !== null && typeof value === 'object' ? 1 : 0, path: [] }];
  while (stack.length > 0) {
    const { value: current, depth, path } = stack.pop()!;
    if (depth > maxDepth) return path;
    if (current === null || typeof current !== 'object') continue;
    // Arrays by index, without an entry pair per element: a body holds
    // hundreds of thousands of vector components, and only containers matter.
    if (Array.isArray(current)) {
      for (let i = 0; i < current.length; i++) {
        const child: unknown = current[i];
        if (child !== null && typeof child === 'object') stack.push({ value: child, depth: depth + 1, path: [...path, i] });
      }
      continue;
    }
    for (const [key, child] of entries(current)) {
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: depth + 1, path: [...path, key] });
    }
  }
  return null;
}

/**
 * Keys of `value` and of every object nested in it. Stops counting past
 * `limit` and returns the path of the object whose keys passed it, else null.
 */
export function firstOverKeyLimit(value: unknown, limit: number): JsonPath | null {
  let count = 0;
  const stack: { value: unknown; path: JsonPath }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    const isArray = Array.isArray(current);
    for (const [key, child] of entries(current)) {
      if (!isArray && ++count > limit) return path;
      stack.push({ value: child, path: [...path, key] });
    }
  }
  return null;
}

/** Own entries only: keys like "__proto__" are data, never the prototype. */
function entries(container: object): [string | number, unknown][] {
  if (Array.isArray(container)) return container.map((child, i) => [i, child]);
  return Object.keys(container).map((key) => [key, (container as Record<string, unknown>)[key]]);
}
