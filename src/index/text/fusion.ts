// Hybrid search's fusion of two ranked lists, one per arm (vector, text),
// into one. RRF: sum over the arms of 1 / (k + rank), rank 1-based.
// linear: alpha * vector + (1 - alpha) * text, each arm's scores min-max
// normalised to [0, 1] (higher better: l2 distances inverted; all equal -> 1;
// absent from an arm -> 0 for it). Ties go by the seq of the write.

import { SPEC_LIMITS } from '../../config.js';

export type Fusion = { method: 'rrf'; k?: number } | { method: 'linear'; alpha?: number };

/** One arm's hit: its row and score, best first in its list. */
export interface ArmHit {
  row: number;
  score: number;
}

export interface FusedHit {
  row: number;
  score: number;
  vectorScore: number | null;
  vectorRank: number | null;
  textScore: number | null;
  textRank: number | null;
}

/**
 * The union of `vector` and `text` (each best first), fused, best first.
 * `lowerIsBetter`: the vector arm's scores are distances (l2).
 */
export function fuse(vector: readonly ArmHit[], text: readonly ArmHit[], fusion: Fusion, lowerIsBetter: boolean, seqOf: (row: number) => number): FusedHit[] {
  const byRow = new Map<number, FusedHit>();
  const seqs = new Map<FusedHit, number>();
  const hitOf = (row: number) => {
    let hit = byRow.get(row);
    if (!hit) {
      hit = { row, score: 0, vectorScore: null, vectorRank: null, textScore: null, textRank: null };
      byRow.set(row, hit);
      seqs.set(hit, seqOf(row));
    }
    return hit;
  };
  vector.forEach(({ row, score }, i) => {
    Object.assign(hitOf(row), { vectorScore: score, vectorRank: i + 1 });
  });
  text.forEach(({ row, score }, i) => {
    Object.assign(hitOf(row), { textScore: score, textRank: i + 1 });
  });
  const hits = [...byRow.values()];
  if (fusion.method === 'rrf') {
    const k = fusion.k ?? SPEC_LIMITS.defaultRrfK;
    for (const hit of hits) {
      hit.score = (hit.vectorRank === null ? 0 : 1 / (k + hit.vectorRank)) + (hit.textRank === null ? 0 : 1 / (k + hit.textRank));
    }
  } else {
    const alpha = fusion.alpha ?? SPEC_LIMITS.defaultLinearAlpha;
    const vectorNorm = normaliser(vector, lowerIsBetter),
      textNorm = normaliser(text, false);
    for (const hit of hits) {
      const v = hit.vectorScore === null ? 0 : vectorNorm(hit.vectorScore);
      const t = hit.textScore === null ? 0 : textNorm(hit.textScore);
      hit.score = alpha * v + (1 - alpha) * t;
    }
  }
  return hits.sort((a, b) => b.score - a.score || seqs.get(a)! - seqs.get(b)!);
}

/** Min-max normalisation over an arm's scores, higher better. */
function normaliser(hits: readonly ArmHit[], lowerIsBetter: boolean): (score: number) => number {
  let min = Infinity,
    max = -Infinity;
  for (const { score } of hits) {
    if (score < min) min = score;
    if (score > max) max = score;
  }
  if (max === min) return () => 1;
  return lowerIsBetter ? (score) => (max - score) / (max - min) : (score) => (score - min) / (max - min);
}
