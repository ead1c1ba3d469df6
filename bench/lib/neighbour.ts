// A neighbour session's searches timed while another session works: one
// every `everyMs`, until stop() gives their latencies (ms: p50, p99, max).
import type { ChildServer } from './child-server.js';

export interface Latencies {
  p50: number;
  p99: number;
  max: number;
  count: number;
}

export function neighbourLoop(server: ChildServer, token: string, search: Buffer, everyMs: number): () => Promise<Latencies> {
  const latencies: number[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const t0 = performance.now();
      await server.post('/search', search, token);
      const ms = performance.now() - t0;
      latencies.push(ms);
      if (ms < everyMs) await new Promise((resolve) => setTimeout(resolve, everyMs - ms));
    }
  })();
  return async () => {
    running = false;
    await done;
    const sorted = latencies.sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1], count: sorted.length };
  };
}

export interface Watched extends Latencies {
  /** Searches that failed (an error status or a dropped connection), and the first one's message. */
  errors: number;
  firstError?: string;
  /** The last search had not come back `graceMs` after stop (its wait so far is counted in max). */
  stuck: boolean;
}

/**
 * neighbourLoop for a load that may hold the server for seconds: stop waits
 * at most `graceMs` for the search in flight and counts its wait so far,
 * and a failed search is counted (with its wait), not thrown.
 */
export function neighbourWatch(server: ChildServer, token: string, search: Buffer, everyMs: number): (graceMs: number) => Promise<Watched> {
  const latencies: number[] = [];
  let running = true;
  let errors = 0;
  let firstError: string | undefined;
  let since = Number.NaN;
  const done = (async () => {
    while (running) {
      since = performance.now();
      await server.post('/search', search, token).catch((err: Error) => {
        errors++;
        firstError ??= err.message.slice(0, 120);
      });
      const ms = performance.now() - since;
      since = Number.NaN;
      latencies.push(ms);
      if (ms < everyMs) await new Promise((resolve) => setTimeout(resolve, everyMs - ms));
    }
  })();
  return async (graceMs) => {
    running = false;
    const back = await Promise.race([done.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), graceMs))]);
    if (!back && !Number.isNaN(since)) latencies.push(performance.now() - since);
    const sorted = latencies.sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
    return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? Number.NaN, count: sorted.length, errors, firstError, stuck: !back };
  };
}
