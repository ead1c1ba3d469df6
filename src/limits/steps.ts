// Work written as steps (a generator that may be paused after each, by
// Slices.run) run here all at once, for callers that need no pause.

/** All of `steps` at once: its result. */
export function runSteps<T>(steps: Generator<unknown, T, unknown>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}
