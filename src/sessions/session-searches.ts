// Every search of a session's index, in one place: in the session's turn
// (session-gate.ts), on the request's own thread when the work is small,
// on the kernel pool's threads otherwise (src/kernel/kernel-pool.ts).
import { apiError } from '../errors.js';
import type { SearchOptions, SearchOutput, SearchPlan } from '../index/types.js';
import { onPool, type PoolExecutor } from '../kernel/executor.js';
import { KernelUnavailableError, type KernelPool } from '../kernel/kernel-pool.js';
import { POOL_MIN_WORK } from '../kernel/search-path.js';
import { REQUEST_SLICE_MS, Slices } from '../limits/slices.js';
import { queryTermsAhead } from './query-terms-ahead.js';
import type { Session } from './session.js';

export class SessionSearches {
  /**
   * `pool`: null with KERNEL_THREADS=1, where every search runs on the
   * request's thread. `recount` counts a session's memory in the budget again.
   */
  constructor(
    readonly pool: KernelPool | null,
    private readonly recount: (session: Session) => void,
  ) {
    this.executor = pool && onPool(pool);
  }

  private readonly executor: PoolExecutor | null;

  /**
   * Frees a session's expired rows before a keyword or hybrid search when one of them has a text (the store sets it:
   * ExpirySweep.sweepSession): BM25's N, df and avgdl then count only live texts, as LocalIndex's do.
   */
  sweepFirst: ((session: Session) => Promise<void>) | null = null;

  /** The k nearest of the session's vectors to each query, or the best by keywords, or both fused (VectorIndex.search). */
  search(session: Session, queries: ArrayLike<number>[] | null, options: SearchOptions): Promise<SearchOutput> {
    return this.inTurn(session, options, (ahead) => session.index.planSearch(queries, ahead));
  }

  /** Stored vectors as the queries, each left out of its own results (VectorIndex.searchByIds). */
  searchByIds(session: Session, ids: string[], options: SearchOptions): Promise<SearchOutput> {
    return this.inTurn(session, options, (ahead) => session.index.planSearchByIds(ids, ahead));
  }

  /**
   * The search `plan` makes, run in the session's turn: its query texts analysed before, in slices
   * (query-terms-ahead.ts), and in the turn the rows its filter must read read first, in slices
   * (VectorIndex.prepareFilter).
   */
  private inTurn(session: Session, options: SearchOptions, plan: (options: SearchOptions) => SearchPlan): Promise<SearchOutput> {
    const texts = options.queryTexts;
    const turn = (ahead: SearchOptions) => session.gate.search(() => this.afterFilter(session, ahead, () => this.run(session, plan(ahead))));
    if (texts === undefined) return turn(options);
    return queryTermsAhead(session, texts).then(async (queryTerms) => {
      if (this.sweepFirst && session.index.expiredTextWaiting) await this.sweepFirst(session);
      return turn({ ...options, queryTerms });
    });
  }

  /** `search` once the rows the filter must read are read (in slices: VectorIndex.prepareFilter), at once when there are none. */
  private afterFilter(session: Session, options: SearchOptions, search: () => Promise<SearchOutput>): Promise<SearchOutput> {
    const reading = session.index.prepareFilter(options.filter);
    return reading ? reading.then(search) : search();
  }

  /** The plan, its per-query work in slices (SearchPlan.runSliced), its scan on the pool when large enough. */
  private run(session: Session, plan: SearchPlan): Promise<SearchOutput> {
    const slices = new Slices(REQUEST_SLICE_MS, { owner: session.tokenHash });
    if (!this.executor || plan.work < POOL_MIN_WORK) return plan.runSliced(null, slices);
    const running = plan.runSliced(this.executor, slices);
    // Its scratch is laid out (the memory grown) before the first await: counted now, not at the session's next request.
    this.recount(session);
    return running.catch((err) => {
      if (err instanceof KernelUnavailableError) throw kernelThreadFailed();
      throw err;
    });
  }
}

/** 503 KERNEL_THREAD_FAILED: the thread running a search died; the pool replaced it, no data was touched. */
function kernelThreadFailed() {
  return apiError(
    'KERNEL_THREAD_FAILED',
    'the thread running this search stopped (out of memory or a fault) and was replaced; the session is intact, retry the search',
    undefined,
    { 'Retry-After': '1' },
  );
}
