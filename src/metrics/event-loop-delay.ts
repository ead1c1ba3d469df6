// How long the event loop was held: perf_hooks.monitorEventLoopDelay with a
// 1 ms timer. A timer that fires late by d ms means the main thread was busy
// for about d ms without a turn, so the largest delay is the longest block.
// Benches make a probe of their own; the service's /metrics reads one probe
// shared by every app of the process (a timer per app would cost each a
// wake-up per millisecond).
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** The timer's period, ms: the finest delay the probe sees. */
export const RESOLUTION_MS = 1;

/** Event-loop delay over a window, milliseconds. */
export interface EventLoopDelay {
  p50: number;
  p99: number;
  max: number;
  mean: number;
  /** Timer samples in the window (0: the window was too short to say anything). */
  samples: number;
}

const ms = (ns: number) => Math.round(ns / 1e3) / 1e3;

export class EventLoopProbe {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });

  constructor() {
    this.histogram.enable();
  }

  /** The delay since the probe started or was last read with `reset`. */
  read(reset = true): EventLoopDelay {
    const h = this.histogram;
    const samples = h.count;
    const delay =
      samples === 0
        ? { p50: 0, p99: 0, max: 0, mean: 0, samples }
        : { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max), mean: ms(h.mean), samples };
    if (reset) h.reset();
    return delay;
  }

  stop(): void {
    this.histogram.disable();
  }
}

let shared: EventLoopProbe | undefined;

/** The process's probe, started on first use and never stopped (its timer does not keep the process alive). */
export function sharedEventLoopProbe(): EventLoopProbe {
  shared ??= new EventLoopProbe();
  return shared;
}
