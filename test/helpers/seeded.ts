/**
 * A seeded random source for property tests, so that a failure names an input that fails again:
 * `next` in [0, 1), `pick` one of the items.
 */
export function seeded(seed: number) {
  let state = seed;
  const next = (): number => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  return { next, pick };
}
