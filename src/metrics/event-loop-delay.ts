// How long the event loop was held: perf_hooks.monitorEventLoopDelay with a
// 1 ms timer. A timer that fires late by d ms means the main thread was busy
// for about d ms without a turn, so the largest delay is the longest block.
// The service's /metrics reads a rolling window (RollingEventLoopDelay) shared by every app
// of the process (a timer per app would cost each a wake-up per millisecond),
// so a scrape resets nothing and no caller can blank the operator's view.
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

/** The delay a histogram holds, in milliseconds. */
function delayOf(h: IntervalHistogram): EventLoopDelay {
  const samples = h.count;
  return samples === 0
    ? { p50: 0, p99: 0, max: 0, mean: 0, samples }
    : { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max), mean: ms(h.mean), samples };
}

/** Slices a rolling window is kept in: the window moves by one slice at a time. */
export const SLICE_MS = 1000;

/**
 * The event-loop delay over the last `windowMs` (whole slices of SLICE_MS,
 * plus the slice under way): reading it changes nothing. Its max is the
 * window's; its p99 and p50 the highest of any one slice (at least the
 * window's own); its mean over all its samples.
 */
export class RollingEventLoopDelay {
  private readonly current: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  /** The closed slices, oldest first. */
  private readonly slices: EventLoopDelay[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(readonly windowMs: number) {
    this.current.enable();
    this.timer = setInterval(() => this.rotate(), SLICE_MS).unref();
  }

  read(): EventLoopDelay {
    const all = [...this.slices, delayOf(this.current)];
    const samples = all.reduce((n, d) => n + d.samples, 0);
    const highest = (key: 'p50' | 'p99' | 'max') => Math.max(...all.map((d) => d[key]));
    const mean = samples === 0 ? 0 : Math.round((all.reduce((t, d) => t + d.mean * d.samples, 0) / samples) * 1e3) / 1e3;
    return { p50: highest('p50'), p99: highest('p99'), max: highest('max'), mean, samples };
  }

  private rotate(): void {
    this.slices.push(delayOf(this.current));
    this.current.reset();
    const keep = Math.max(0, Math.ceil(this.windowMs / SLICE_MS) - 1);
    while (this.slices.length > keep) this.slices.shift();
  }

  stop(): void {
    clearInterval(this.timer);
    this.current.disable();
  }
}

const shared = new Map<number, RollingEventLoopDelay>();

/** The process's window of `windowMs`, started on first use and never stopped (its timers do not keep the process alive). */
export function sharedEventLoopDelay(windowMs: number): RollingEventLoopDelay {
  let rolling = shared.get(windowMs);
  if (!rolling) {
    rolling = new RollingEventLoopDelay(windowMs);
    shared.set(windowMs, rolling);
  }
  return rolling;
}
