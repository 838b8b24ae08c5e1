/**
 * A value at hand, or a promise of it: what the reads on every tool call's path return (the API
 * key by its hash, the caller's tool policy, the scope's connection, a 2025 session), which a store
 * answers from memory nearly every time. A caller holding the value goes on at once: awaiting it
 * would cost a promise and a turn of the microtask queue each (issue 19: a tools/call awaited 18
 * times where the bare proxy awaits twice). Failure is a rejected promise, never a synchronous throw.
 */
export type Awaitable<T> = T | Promise<T>;

/** `work()`, with a throw of it turned into a rejection. */
export function attempt<T>(work: () => Awaitable<T>): Awaitable<T> {
  try {
    return work();
  } catch (error) {
    return rejection(error);
  }
}

/** `next` applied to `value`: at once when it is at hand, else once it settles; a throw of `next` rejects. */
export function andThen<T, U>(value: Awaitable<T>, next: (value: T) => Awaitable<U>): Awaitable<U> {
  if (value instanceof Promise) return value.then(next);
  try {
    return next(value);
  } catch (error) {
    return rejection(error);
  }
}

function rejection(error: unknown): Promise<never> {
  return Promise.reject(error instanceof Error ? error : new Error(String(error)));
}
