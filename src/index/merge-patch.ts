// RFC 7396 JSON Merge Patch: an object patch merges into the target key by
// key, recursively; a null value removes the key; any other value (array and
// scalar included) replaces it. The target is not modified.
import { isObject } from './json-value.js';

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = {};
  if (isObject(target)) {
    // Own keys copied as data: defineProperty keeps a "__proto__" key a key.
    for (const key of Object.keys(target)) define(out, key, target[key]);
  }
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (value === null) delete out[key];
    else define(out, key, mergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value));
  }
  return out;
}

function define(object: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}
