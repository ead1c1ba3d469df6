// test/fixtures/use-lite-vectors.json (scripts/embedding-fixture.ts): texts
// with the model package's own token ids (unclipped) and vectors (TF.js).
import { readFileSync } from 'node:fs';

export interface FixtureEntry {
  text: string;
  ids: number[];
  vector: Float32Array;
}

const raw = JSON.parse(readFileSync(new URL('../fixtures/use-lite-vectors.json', import.meta.url), 'utf8')) as {
  emptyTextIds: number[];
  entries: { text: string; ids: number[]; vector: string }[];
};

export const emptyTextIds: readonly number[] = raw.emptyTextIds;

export const fixture: readonly FixtureEntry[] = raw.entries.map((e) => {
  const bytes = Buffer.from(e.vector, 'base64');
  return { text: e.text, ids: e.ids, vector: new Float32Array(new Uint8Array(bytes).buffer) };
});

/** The largest |a[i] - b[i]|. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`lengths ${a.length} and ${b.length}`);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}
