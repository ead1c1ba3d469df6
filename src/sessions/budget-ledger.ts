// What the sessions cost, counted against MEMORY_BUDGET_BYTES and
// MAX_WASM_MEMORIES: each live session's linear memory, heap and metadata as
// last counted, the token hashes remembered without a session, and the
// checks that refuse a change or a search (503) that would pass them.
import type { Config } from '../config.js';
import { apiError } from '../errors.js';
import { heapCapBytes } from '../limits/heap-limit.js';
import { MemoryBudget, type Reservation } from '../limits/memory-budget.js';
import { WASM_MEMORIES_OUTSIDE_SESSIONS } from '../limits/wasm-memories.js';
import type { Session } from './session.js';

/** reportedUsage() walks every session at most this often. */
export const USAGE_RECOUNT_MS = 1000;

/** JS heap of a session with nothing stored: its objects, index, maps and kernel instance (estimated like heap-size.ts). */
export const SESSION_HEAP_BYTES = 16 * 1024;

/** JS heap of a token hash remembered without its session (expired, or dormant on disk): 64 hex characters, a map entry, a time. */
export const REMEMBERED_TOKEN_HEAP_BYTES = 160;

/** What the ledger counts: the registry's sessions (session-registry.ts) and the reopens under way. */
export interface CountedSessions {
  isLive(session: Session): boolean;
  /** Token hashes remembered without a session (expired, dormant on disk). */
  remembered(): number;
  /** Sessions being reopened: each may hold a WebAssembly memory. */
  reopening(): number;
}

/** What a session was last counted at. */
interface Counted {
  linear: number;
  heap: number;
  metadata: number;
}

const NOTHING: Counted = { linear: 0, heap: 0, metadata: 0 };

/** Seconds a caller refused for capacity is asked to wait. */
export function retryAfterSeconds(config: Config): number {
  return Math.ceil(Math.min(config.sessionTtlMs, 60_000) / 1000);
}

export class BudgetLedger {
  /** MEMORY_BUDGET_BYTES over what sessions store and what requests hold in flight. */
  readonly budget: MemoryBudget;
  /** What each live session was last counted at in the budget (recount()). */
  private readonly counted = new WeakMap<Session, Counted>();
  /** What the remembered token hashes were last counted at in the budget's heap. */
  private rememberedCounted = 0;
  /** Live sessions counted with a linear memory: kept as a count, since every first add asks. */
  private sessionsWithMemory = 0;
  private lastRecountAll = -Infinity;
  /** Embedding threads started: each holds a WebAssembly memory (its encoder's). */
  private embeddingThreads = 0;

  constructor(
    private readonly config: Config,
    private readonly sessions: CountedSessions,
  ) {
    this.budget = new MemoryBudget(config.memoryBudgetBytes, retryAfterSeconds(config), heapCapBytes(config));
  }

  /**
   * Refuse (503 SERVER_AT_CAPACITY) a change, or a search, that would take
   * `session` to `bytesAfter` of linear memory and add `heapBytes` of JS heap
   * when that passes the budget (src/limits/memory-budget.ts): a change must
   * fit in the stored share, a search's working memory (a read) in the whole
   * budget. One that grows neither always passes.
   */
  assertMemoryBudget(session: Session, bytesAfter: number, what: 'change' | 'search' = 'change', heapBytes = 0, metadataBytes = 0): void {
    const linearGrowth = Math.max(0, bytesAfter - session.index.stats().memoryBytes);
    const assert = what === 'search' ? this.budget.assertRoom : this.budget.assertStoredRoom;
    assert.call(
      this.budget,
      linearGrowth + heapBytes + metadataBytes,
      what === 'search'
        ? `the server's memory budget is used up: this search needs ${linearGrowth} more bytes of working memory; nothing was changed, try a smaller search (fewer queries, a lower topK or candidatePool) or try again later`
        : "the server's memory budget is used up; nothing was stored, try again later",
      {
        linearMemoryBytes: this.budget.linearMemoryBytes,
        heapBytes: this.budget.heapBytes,
      },
      heapBytes,
    );
  }

  /** Refuse (503) a new session when the budget has no room for its heap. */
  assertSessionRoom(): void {
    this.budget.assertStoredRoom(SESSION_HEAP_BYTES, "the server's memory budget is used up; no session was created, try again later", {}, SESSION_HEAP_BYTES);
  }

  /**
   * Count what `session` holds now in the budget (after every write, every
   * authenticated request, and when a session joins or leaves).
   */
  recount(session: Session): void {
    const live = this.sessions.isLive(session);
    const stats = live ? session.index.stats() : null;
    const now = stats ? { linear: stats.memoryBytes, heap: SESSION_HEAP_BYTES + stats.heapBytes, metadata: stats.metadataBytes + stats.textBytes } : NOTHING;
    this.recountRemembered();
    const was = this.counted.get(session) ?? NOTHING;
    this.budget.adjustStored(now.linear - was.linear, now.heap - was.heap, now.metadata - was.metadata);
    this.sessionsWithMemory += Number(now.linear > 0) - Number(was.linear > 0);
    if (live) this.counted.set(session, now);
    else this.counted.delete(session);
  }

  /**
   * Refuse (503) the first write of a session that has no WebAssembly memory
   * yet when the process holds maxWasmMemories: V8 reserves about 10 GiB of
   * address space for each and cannot reserve past about 13,000.
   */
  assertWasmMemoryFor(session: Session): void {
    if (session.index.stats().memoryBytes > 0) return;
    this.assertWasmMemoryLeft('nothing was stored, try again later');
  }

  /** 503 when no WebAssembly memory is left for one more; `outcome` says what became of the request. */
  assertWasmMemoryLeft(outcome: string): void {
    const held = this.wasmMemories();
    if (held + 1 > this.config.maxWasmMemories) {
      throw apiError(
        'SERVER_AT_CAPACITY',
        `the server holds its maximum of ${this.config.maxWasmMemories} WebAssembly memories; ${outcome}`,
        {
          maxWasmMemories: this.config.maxWasmMemories,
          wasmMemories: held,
        },
        { 'Retry-After': String(retryAfterSeconds(this.config)) },
      );
    }
  }

  /**
   * WebAssembly memories the process may hold: one per session with vectors,
   * one per session being reopened, one per embedding thread started, plus
   * those outside sessions (at most).
   */
  wasmMemories(): number {
    return this.sessionsWithMemory + this.sessions.reopening() + WASM_MEMORIES_OUTSIDE_SESSIONS + this.embeddingThreads;
  }

  /**
   * Hold `bytes` of the embedding pool (src/embedding/embedding-pool.ts) in
   * the budget, 503 when they do not fit: a thread's model (which also holds
   * one WebAssembly memory, refused past MAX_WASM_MEMORIES) or the vectors
   * of texts being embedded.
   */
  reserveEmbedding(bytes: number, message: string, thread: boolean): Reservation {
    if (thread) this.assertWasmMemoryLeft('no embedding thread was started, try again later');
    const held = this.budget.reserve('embedding', bytes, message);
    if (!thread) return held;
    this.embeddingThreads++;
    let released = false;
    return {
      get bytes() {
        return held.bytes;
      },
      grow: (more) => held.grow(more),
      release: () => {
        if (released) return;
        released = true;
        this.embeddingThreads--;
        held.release();
      },
    };
  }

  /**
   * Whether a report walks every session now (23 ms for 10,000): at most once
   * per USAGE_RECOUNT_MS (the walk is noted); in between the budget's
   * counters, which every request keeps current for its own session.
   */
  walkDue(): boolean {
    const now = performance.now();
    if (now - this.lastRecountAll < USAGE_RECOUNT_MS) return false;
    this.lastRecountAll = now;
    return true;
  }

  /** Count the token hashes remembered without a session (bounded: MAX_REMEMBERED_EXPIRED, MAX_SESSIONS) in the budget's heap. */
  recountRemembered(): void {
    const now = this.sessions.remembered() * REMEMBERED_TOKEN_HEAP_BYTES;
    this.budget.adjustStored(0, now - this.rememberedCounted);
    this.rememberedCounted = now;
  }
}
