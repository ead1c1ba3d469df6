// How many filter-index entries a row's metadata lists at most, and their
// keys' bytes at most: the memory budget's projection of a write, made before
// anything is written and without an index. It walks metadata as
// MetadataIndex.addRow lists it.

import type { Metadata } from '../filter.js';
import { canonicalBytesUpper } from './canonical-json.js';
import { HASH_BYTES, VALUE_AT } from './entry-key.js';

/** The filter-index entries one row's metadata lists, and their keys' bytes. */
export interface EntryCount {
  entries: number;
  keyBytes: number;
}

/** Entries a row with `metadata` adds to an index at most, and the bytes of their keys at most. */
export function measureEntries(metadata: Metadata, maxValueBytes: number): EntryCount {
  const total = { entries: 0, keyBytes: 0 };
  measureObject(metadata, 0, maxValueBytes, total);
  return total;
}

function measureObject(object: Record<string, unknown>, prefixLength: number, maxValueBytes: number, total: EntryCount): void {
  for (const key of Object.keys(object)) {
    const value = object[key];
    if (value === undefined || typeof value === 'function') continue;
    const pathLength = prefixLength + 1 + key.length;
    total.entries++;
    total.keyBytes += 1 + 3 * pathLength;
    if (value === null || typeof value !== 'object') {
      measureValue(value, maxValueBytes, total);
      continue;
    }
    measureComposite(value, maxValueBytes, total);
    if (!Array.isArray(value)) measureObject(value as Record<string, unknown>, pathLength, maxValueBytes, total);
    else {
      for (const item of value) {
        if (item === null || typeof item !== 'object') measureValue(item, maxValueBytes, total);
        else {
          measureComposite(item, maxValueBytes, total);
          if (!Array.isArray(item)) measureObject(item as Record<string, unknown>, pathLength, maxValueBytes, total);
        }
      }
    }
  }
}

function measureValue(value: unknown, maxValueBytes: number, total: EntryCount): void {
  total.entries++;
  if (typeof value === 'string' && 3 * value.length > maxValueBytes) {
    // Maybe a long string: its hash's entry and the path's long strings too.
    total.entries += 2;
    total.keyBytes += maxValueBytes + 2 * VALUE_AT + HASH_BYTES;
  }
  total.keyBytes += VALUE_AT + (typeof value === 'number' ? 8 : typeof value === 'string' ? Math.min(3 * value.length, maxValueBytes) : 0);
}

/** An array or object's entry: its canonical text, or its hash past maxValueBytes. */
function measureComposite(value: object, maxValueBytes: number, total: EntryCount): void {
  total.entries++;
  total.keyBytes += VALUE_AT + Math.max(HASH_BYTES, Math.min(canonicalBytesUpper(value, maxValueBytes), maxValueBytes));
}
