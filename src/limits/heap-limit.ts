// The JS heap and the memory budget. Part of what the budget counts outside
// linear memory and the metadata stores (ids, answers, parsed bodies) lives in
// V8's heap, so the heap's own limit must hold the budget, or V8 would end the process
// ("heap limit reached") before the budget refused anything. npm start runs
// the server with --max-old-space-size from heapLimitMiB(config) (start.ts);
// a server started another way caps the heap part of its budget to what its
// heap can hold (heapCapBytes), and start-up refuses a budget the machine
// cannot hold (assertBudgetFits).
import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { ConfigError, type Config } from '../config.js';

const MiB = 1024 * 1024;

/** The heap the server takes with nothing stored (code, modules, caches, young generation), with room. */
export const HEAP_BASELINE_BYTES = 256 * MiB;

/** The heap estimate (src/index/heap-size.ts) can be below what V8 takes by up to this factor (test/index/heap-size.test.ts). */
const ESTIMATE_SLACK = 1.25;

/**
 * Heap beyond the budget for the one body parsed at a time (JSON.parse runs
 * to completion before the next request's): its text and parsed values, at
 * most about 4 times its bytes for bodies of vectors and metadata.
 */
const parseRoom = (config: Config) => 4 * config.maxBodyBytes;

/** The --max-old-space-size (MiB) that holds the whole budget in the heap; null without a budget. */
export function heapLimitMiB(config: Config): number | null {
  if (config.memoryBudgetBytes === 0) return null;
  return Math.ceil((config.memoryBudgetBytes * ESTIMATE_SLACK + HEAP_BASELINE_BYTES + parseRoom(config)) / MiB);
}

/** The most of the budget that may be heap in this process (its heap limit less the baseline and the parse room). */
export function heapCapBytes(config: Config, heapLimit = getHeapStatistics().heap_size_limit): number {
  return Math.max(0, Math.floor((heapLimit - HEAP_BASELINE_BYTES - parseRoom(config)) / ESTIMATE_SLACK));
}

/** The memory this process may use: the machine's, or its cgroup's limit when lower. */
export function availableMemory(): number {
  let limit = totalmem();
  for (const file of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const value = Number(readFileSync(file, 'utf8').trim());
      if (Number.isSafeInteger(value) && value > 0) limit = Math.min(limit, value);
    } catch {
      // not in a cgroup with a memory limit
    }
  }
  return limit;
}

/** Refuse a budget that cannot fit: with the heap baseline and the parse room, more than the machine (or cgroup) has. */
export function assertBudgetFits(config: Config, available = availableMemory()): void {
  const budget = config.memoryBudgetBytes;
  if (budget === 0) return;
  const needed = budget + HEAP_BASELINE_BYTES + parseRoom(config);
  if (needed > available) {
    throw new ConfigError(
      `MEMORY_BUDGET_BYTES=${budget} cannot fit: with the server's own heap (${HEAP_BASELINE_BYTES / MiB} MiB) and room to parse one body of MAX_BODY_BYTES (${parseRoom(config) / MiB} MiB) it needs ${Math.ceil(needed / MiB)} MiB, and this machine has ${Math.floor(available / MiB)} MiB; lower MEMORY_BUDGET_BYTES (or MAX_BODY_BYTES)`,
    );
  }
  if (config.maxBodyBytes > budget) {
    throw new ConfigError(
      `MAX_BODY_BYTES=${config.maxBodyBytes} is larger than MEMORY_BUDGET_BYTES=${budget}: no body that large could ever be taken; lower MAX_BODY_BYTES or raise the budget`,
    );
  }
}
