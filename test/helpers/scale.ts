// Case counts of the slow randomized suites: whole under npm test, a
// fraction under npm run test:fast (TEST_SCALE, in (0, 1]).
const raw = Number(process.env.TEST_SCALE ?? 1);
export const TEST_SCALE = raw > 0 && raw <= 1 ? raw : 1;

/** `full` cases scaled by TEST_SCALE, at least `min`. */
export const scaled = (full: number, min = 1) => Math.max(min, Math.round(full * TEST_SCALE));

/** Every (1 / TEST_SCALE)-th item from the first, so a scaled run still spans the list. */
export function sampled<T>(items: readonly T[]): T[] {
  const step = Math.max(1, Math.round(1 / TEST_SCALE));
  return items.filter((_, i) => i % step === 0);
}
