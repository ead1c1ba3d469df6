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
