// Decay: a metadata value's distance from an origin as a score in [0, 1],
// by the curves Qdrant defines (the value is `midpoint` at |x - origin| =
// scale): exp, gauss and linear (0 from scale / (1 - midpoint) on). Numbers,
// or ISO-8601 dates (an origin that is a date or "now"; scale in ms). Read
// from the filter index for every row at once: a row with several values
// (an array) takes the one nearest the origin; a row without one, 0.
import { SPEC_LIMITS } from '../../config.js';
import type { IndexRead } from '../index-read.js';
import type { DecayCurve, DecayOptions } from '../types.js';

/** A date, or a date and time with a zone (a time without one would be read in the server's zone). */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** Milliseconds of an ISO-8601 date as decay reads one, NaN for anything else. */
export function dateMs(text: string): number {
  return ISO_DATE.test(text) ? Date.parse(text) : Number.NaN;
}

/** The decay of a distance from the origin. */
export function curveOf(curve: DecayCurve, midpoint: number, scale: number): (distance: number) => number {
  switch (curve) {
    case 'linear':
      return (d) => Math.max(0, 1 - ((1 - midpoint) * d) / scale);
    case 'gauss': {
      const rate = Math.log(midpoint) / (scale * scale);
      return (d) => Math.exp(rate * d * d);
    }
    default: {
      const rate = Math.log(midpoint) / scale;
      return (d) => Math.exp(rate * d);
    }
  }
}

/** The decay options with their defaults. */
export function resolveDecay(decay: DecayOptions): Required<DecayOptions> {
  return {
    ...decay,
    midpoint: decay.midpoint ?? SPEC_LIMITS.defaultDecayMidpoint,
    curve: decay.curve ?? 'exp',
    weight: decay.weight ?? SPEC_LIMITS.defaultDecayWeight,
  };
}

/** Per metadata store, the last decays worked out with a fixed origin, while its metadata is unchanged (a session asks the same decay again and again). */
const lastDecays = new WeakMap<object, { changes: number; size: number; key: string; byRow: Float64Array }>();

/** Each row's decay (0 without a value at the path), `now` the time "now" stands for. Read-only: it may be shared by later searches. */
export function decayByRow(index: IndexRead, decay: Required<DecayOptions>, now: number): Float64Array {
  const key = decay.origin === 'now' ? null : JSON.stringify([decay.path, decay.origin, decay.scale, decay.midpoint, decay.curve]);
  const last = lastDecays.get(index.metadata);
  if (key !== null && last && last.key === key && last.changes === index.metadata.changes && last.size === index.rows.size) return last.byRow;
  const byRow = workOut(index, decay, now);
  if (key !== null) lastDecays.set(index.metadata, { changes: index.metadata.changes, size: index.rows.size, key, byRow });
  return byRow;
}

function workOut(index: IndexRead, decay: Required<DecayOptions>, now: number): Float64Array {
  const byRow = new Float64Array(index.rows.size);
  const dates = typeof decay.origin === 'string';
  const origin = decay.origin === 'now' ? now : dates ? dateMs(decay.origin as string) : (decay.origin as number);
  const curve = curveOf(decay.curve, decay.midpoint, decay.scale);
  const { values, starts, rows } = index.metadata.valuesAt(decay.path);
  for (let v = 0; v < values.length; v++) {
    const value = values[v];
    const x = dates ? (typeof value === 'string' ? dateMs(value) : Number.NaN) : typeof value === 'number' ? value : Number.NaN;
    if (Number.isNaN(x)) continue;
    const d = curve(Math.abs(x - origin));
    for (let i = starts[v]; i < starts[v + 1]; i++) if (d > byRow[rows[i]]) byRow[rows[i]] = d;
  }
  return byRow;
}

/** A fused hit of a hybrid search, or a row neither arm ranked (its fused score 0). */
interface Decayable {
  row: number;
  score: number;
}

/**
 * Decay applied to a hybrid search's fused hits: each one's score becomes
 * (1 - weight) x fused + weight x decay, and every other kept row (`keep`)
 * with a decay competes at weight x decay (its fused score is 0: neither arm
 * ranked it; one with neither is left out, as a hybrid search leaves it).
 * The best `k` at least `threshold`, best first, ties by insertion (`seqOf`).
 */
export function decayFused<T extends Decayable>(
  fused: readonly T[],
  decays: Float64Array,
  weight: number,
  keep: (row: number) => boolean,
  k: number,
  threshold: number,
  seqOf: (row: number) => number,
  unranked: (row: number) => T,
): T[] {
  const best: { hit: T | null; row: number; score: number; seq: number }[] = [];
  const offer = (row: number, score: number, hit: T | null) => {
    if (!(score >= threshold)) return;
    const seq = seqOf(row);
    const worse = (a: { score: number; seq: number }) => a.score < score || (a.score === score && a.seq > seq);
    if (best.length === k && !worse(best[k - 1])) return;
    let at = best.length < k ? best.length : k - 1;
    while (at > 0 && worse(best[at - 1])) {
      best[at] = best[at - 1];
      at--;
    }
    best[at] = { hit, row, score, seq };
  };
  const ranked = new Set<number>();
  for (const hit of fused) {
    ranked.add(hit.row);
    offer(hit.row, (1 - weight) * hit.score + weight * decays[hit.row], hit);
  }
  for (let row = 0; row < decays.length; row++) {
    if (decays[row] > 0 && !ranked.has(row) && keep(row)) offer(row, weight * decays[row], null);
  }
  return best.map(({ hit, row, score }) => Object.assign(hit ?? unranked(row), { score }));
}
