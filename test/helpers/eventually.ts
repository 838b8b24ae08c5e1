import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Waits until `check` holds, asking every 20 ms: only for what the passing of time brings and no
 * event announces (a lock's expiry, a reconnection). Rejects after `timeoutMs`.
 */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(20);
  }
}
