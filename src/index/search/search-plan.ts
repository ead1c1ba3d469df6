// A search ready to run, in the three ways a SearchPlan offers: its kernel
// scan, then its per-query work as steps that may pause between queries.
import type { PoolExecutor } from '../../kernel/executor.js';
import type { SearchOutput, SearchPlan } from '../types.js';
import { runSteps } from '../../limits/steps.js';

/** Work done a query at a time: a pause may come after each (SearchPlan.runSliced). */
export type QuerySteps = Generator<void, SearchOutput, void>;

/** A plan whose kernel scan (`scan` here, `scanOn` a pool) is followed by per-query `finish` steps. */
export function stepsPlan<T>(work: number, scan: () => T, scanOn: (executor: PoolExecutor) => Promise<T>, finish: (scanned: T) => QuerySteps): SearchPlan {
  return {
    work,
    run: () => runSteps(finish(scan())),
    runOn: async (executor) => runSteps(finish(await scanOn(executor))),
    runSliced: async (executor, slices) => slices.run(finish(executor ? await scanOn(executor) : scan())),
  };
}

/** The plan of a search whose answer is known before any scan (an index with nothing to search). */
export function answeredPlan(output: SearchOutput): SearchPlan {
  return {
    work: 0,
    run: () => output,
    runOn: async () => output,
    runSliced: async () => output,
  };
}

/** `plan`, its output passed through `map`. */
export function mapPlan(plan: SearchPlan, map: (output: SearchOutput) => SearchOutput): SearchPlan {
  return {
    work: plan.work,
    run: () => map(plan.run()),
    runOn: async (executor) => map(await plan.runOn(executor)),
    runSliced: async (executor, slices) => map(await plan.runSliced(executor, slices)),
  };
}
