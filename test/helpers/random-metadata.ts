// Random metadata and filters over it, for the tests that hold the metadata
// store to the reference reading (test/helpers/filter-reference.ts).
import type { Metadata } from '../../src/index/filter.js';
import { randomInt, type Rng } from './random.js';

export const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[randomInt(rng, xs.length)];

export interface MetadataShape {
  scalars: readonly unknown[];
  keys: readonly string[];
  /** Paths the filters name (nested ones included). */
  paths: readonly string[];
  /** Operands of $gt, $gte, $lt, $lte. */
  bounds: readonly (number | string)[];
  /** Deepest level of nested objects and arrays. */
  maxDepth: number;
  /** Chance that a record has each key. */
  keyChance: number;
}

export function randomValue(shape: MetadataShape, rng: Rng, depth: number): unknown {
  const r = rng();
  if (r < 0.6 || depth >= shape.maxDepth) return pick(rng, shape.scalars);
  if (r < 0.8) return Array.from({ length: randomInt(rng, 4) }, () => (rng() < 0.7 ? pick(rng, shape.scalars) : randomValue(shape, rng, depth + 1)));
  return randomMetadata(shape, rng, depth + 1);
}

export function randomMetadata(shape: MetadataShape, rng: Rng, depth = 0): Metadata {
  const out: Metadata = {};
  for (const key of shape.keys) if (rng() < shape.keyChance) out[key] = randomValue(shape, rng, depth);
  return out;
}

export function randomFilter(shape: MetadataShape, rng: Rng, depth = 0): Record<string, unknown> {
  const r = rng();
  if (depth < 2 && r < 0.12) return { $or: [randomFilter(shape, rng, depth + 1), randomFilter(shape, rng, depth + 1)] };
  if (depth < 2 && r < 0.24) return { $and: [randomFilter(shape, rng, depth + 1), randomFilter(shape, rng, depth + 1)] };
  if (depth < 2 && r < 0.3) return { $not: randomFilter(shape, rng, depth + 1) };
  const scalar = pick(rng, shape.scalars);
  const ops: (() => unknown)[] = [
    () => scalar,
    () => ({ $eq: scalar }),
    () => ({ $ne: scalar }),
    () => ({ $in: [scalar, pick(rng, shape.scalars)] }),
    () => ({ $nin: [scalar] }),
    () => ({ [pick(rng, ['$gt', '$gte', '$lt', '$lte'])]: pick(rng, shape.bounds) }),
    () => ({ $exists: rng() < 0.5 }),
    () => randomValue(shape, rng, 1), // deep equality with an object or array now and then
  ];
  return { [pick(rng, shape.paths)]: pick(rng, ops)() };
}
