// Timing helpers: every case of a comparison runs in the same process,
// interleaved round by round (so drift from other load on this shared
// machine hits all of them alike), and we report the median per call.
import { performance } from 'node:perf_hooks';

export interface Case {
  name: string;
  /** One call of the operation being timed. */
  run: () => unknown;
}

export interface Timing {
  name: string;
  /** Median milliseconds per call. */
  ms: number;
  /** Every round's milliseconds per call. */
  rounds: number[];
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Calls per round so that one round of `c` takes about `targetMs`. */
function callsFor(c: Case, targetMs: number): number {
  const t0 = performance.now();
  c.run();
  const one = Math.max(performance.now() - t0, 0.001);
  return Math.max(1, Math.min(10_000, Math.round(targetMs / one)));
}

/**
 * Time every case for `rounds` rounds; in each round every case runs its own
 * number of calls back to back, cases in rotating order.
 */
export function interleave(cases: Case[], { rounds = 7, targetMs = 150 } = {}): Timing[] {
  for (const c of cases) c.run(); // warm-up (JIT, page faults)
  const calls = cases.map((c) => callsFor(c, targetMs));
  const perRound = cases.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < cases.length; k++) {
      const i = (k + r) % cases.length;
      const t0 = performance.now();
      for (let n = 0; n < calls[i]; n++) cases[i].run();
      perRound[i].push((performance.now() - t0) / calls[i]);
    }
  }
  return cases.map((c, i) => ({ name: c.name, ms: median(perRound[i]), rounds: perRound[i] }));
}

/**
 * How much `b` costs against `a` when the difference is a few percent: `pairs`
 * times, `calls` calls of each back to back (the order flipped every pair;
 * both get the same call indexes, so the same queries), and the median of the
 * pairs' time ratios b / a. Pairing cancels the drift that separate rounds
 * see on a shared machine.
 */
export function pairedRatio(a: (call: number) => unknown, b: (call: number) => unknown, { pairs = 41, calls = 4 } = {}): number {
  const time = (f: (call: number) => unknown, first: number) => {
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) f(first + i);
    return performance.now() - t0;
  };
  time(a, 0);
  time(b, 0); // warm-up
  const ratios: number[] = [];
  for (let p = 0; p < pairs; p++) {
    const first = p * calls;
    let ta: number, tb: number;
    if (p % 2) {
      ta = time(a, first);
      tb = time(b, first);
    } else {
      tb = time(b, first);
      ta = time(a, first);
    }
    ratios.push(tb / ta);
  }
  return median(ratios);
}

export const fmt = (x: number, digits = 3) => (Number.isFinite(x) ? x.toFixed(digits) : String(x));

/** Print rows as an aligned text table. */
export function printTable(rows: Record<string, string | number>[]): void {
  if (rows.length === 0) return;
  const cols = Object.keys(rows[0]);
  const cell = (v: string | number) => (typeof v !== 'number' ? v : Number.isInteger(v) ? String(v) : fmt(v));
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(cell(r[c])).length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padStart(width[i])).join('  ');
  console.log(line(cols));
  for (const r of rows) console.log(line(cols.map((c) => String(cell(r[c])))));
}

/** Large-N cases are skipped with `--quick` (used to smoke-test the scripts). */
export const quick = process.argv.includes('--quick');

export interface TimedCase {
  name: string;
  /** Milliseconds per call over `calls` calls (a case may time itself, e.g. in a child process). */
  time: (calls: number) => Promise<number>;
}

/** A TimedCase's `time` for an in-process operation, sync or async. */
export const timeCalls =
  (run: () => unknown) =>
  async (calls: number): Promise<number> => {
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) {
      const result = run();
      if (result instanceof Promise) await result;
    }
    return (performance.now() - t0) / calls;
  };

/** interleave() for cases that are async or time themselves. */
export async function interleaveTimed(cases: TimedCase[], { rounds = 5, targetMs = 100 } = {}): Promise<Timing[]> {
  for (const c of cases) await c.time(1); // warm-up
  const calls: number[] = [];
  for (const c of cases) calls.push(Math.max(1, Math.min(10_000, Math.round(targetMs / Math.max(await c.time(1), 0.001)))));
  const perRound = cases.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < cases.length; k++) {
      const i = (k + r) % cases.length;
      perRound[i].push(await cases[i].time(calls[i]));
    }
  }
  return cases.map((c, i) => ({ name: c.name, ms: median(perRound[i]), rounds: perRound[i] }));
}

/** Status codes (or error names) seen, counted: printed as `200x3 503x1`, `-` for none. */
export class Codes {
  readonly seen = new Map<string, number>();
  add(code: number | string) {
    this.seen.set(String(code), (this.seen.get(String(code)) ?? 0) + 1);
  }
  toString() {
    return (
      [...this.seen]
        .sort()
        .map(([c, n]) => `${c}x${n}`)
        .join(' ') || '-'
    );
  }
}
