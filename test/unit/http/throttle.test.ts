import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../../core/admin/password.js';
import { SignInThrottle } from '../../../core/http/throttle.js';
import { MemoryLock } from '../../../core/coordination/lock.js';
import { openRedisCoordination } from '../../../core/coordination/redis/index.js';
import { SqliteStore } from '../../../core/store/sqlite/index.js';
import { deleteKeys, randomPrefix, requireRedis, TEST_REDIS_URL } from '../../helpers/redis.js';

const WINDOW_MS = 60_000;
const PASSWORD = 'correct horse battery staple';

let dir: string;
let store: SqliteStore;
let throttle: SignInThrottle;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-throttle-'));
  store = new SqliteStore(join(dir, 'toolgate.db'));
  await store.migrate();
  await store.dashboard.setPasswordHash(await hashPassword(PASSWORD), { onlyIfUnset: true });
  throttle = new SignInThrottle(store, new MemoryLock(), WINDOW_MS);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Records failures as if they happened `agoMs` ago. */
async function failed(source: string, times: number, agoMs: number): Promise<void> {
  for (let i = 0; i < times; i++)
    await store.dashboard.addSignInFailure(source, new Date(Date.now() - agoMs).toISOString());
}

describe('the admin password hash', () => {
  it('is scrypt with its parameters and a random salt, and verifies only the same password', async () => {
    const a = await hashPassword(PASSWORD);
    const b = await hashPassword(PASSWORD);
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain(PASSWORD);
    await expect(verifyPassword(PASSWORD, a)).resolves.toBe(true);
    await expect(verifyPassword(`${PASSWORD} `, a)).resolves.toBe(false);
    await expect(verifyPassword(PASSWORD, 'bcrypt$whatever')).resolves.toBe(false);
  });
});

describe('SignInThrottle', () => {
  it('locks an address after 5 failures in the window, until the oldest of them ages out', async () => {
    await failed('10.0.0.1', 5, 50_000);
    const locked = await throttle.attempt('10.0.0.1', PASSWORD);
    expect(locked).toMatchObject({ ok: false, reason: 'locked' });
    const seconds = (locked as { retryAfterSeconds: number }).retryAfterSeconds;
    expect(seconds).toBeGreaterThanOrEqual(9);
    expect(seconds).toBeLessThanOrEqual(10);
    // Another address is not locked by it.
    await expect(throttle.attempt('10.0.0.2', 'nope')).resolves.toEqual({ ok: false, reason: 'wrong' });
    await expect(throttle.attempt('10.0.0.2', PASSWORD)).resolves.toEqual({ ok: true, value: true });
  });

  it("keeps each kind of sign-in's failures to itself: wrong API keys on the front door never lock the dashboard", async () => {
    const frontDoor = new SignInThrottle(store, new MemoryLock(), WINDOW_MS, 'front-door');
    const wrong = () => Promise.resolve({ ok: false as const, reason: 'wrong' as const });
    for (let i = 0; i < 5; i++) await frontDoor.guard('10.0.1.1', wrong);
    await expect(frontDoor.guard('10.0.1.1', wrong)).resolves.toMatchObject({ reason: 'locked' });
    await expect(throttle.attempt('10.0.1.1', PASSWORD)).resolves.toEqual({ ok: true, value: true });
    await failed('10.0.3.1', 5, 1_000);
    await expect(throttle.attempt('10.0.3.1', PASSWORD)).resolves.toMatchObject({ reason: 'locked' });
    await expect(
      frontDoor.guard('10.0.3.1', () => Promise.resolve({ ok: true as const, value: 'signed in' })),
    ).resolves.toEqual({ ok: true, value: 'signed in' });
  });

  it('lets an address in once its failures are older than the window', async () => {
    await failed('10.0.0.1', 5, WINDOW_MS + 1_000);
    await expect(throttle.attempt('10.0.0.1', PASSWORD)).resolves.toEqual({ ok: true, value: true });
  });

  it('locks everyone after 20 failures from any addresses together', async () => {
    for (let i = 0; i < 20; i++) await failed(`10.0.1.${i}`, 1, 1_000);
    await expect(throttle.attempt('10.0.2.1', PASSWORD)).resolves.toMatchObject({
      ok: false,
      reason: 'locked',
    });
  });

  it('counts concurrent attempts one at a time: a burst cannot slip past the limit', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () => throttle.attempt('10.0.0.9', 'guess')),
    );
    expect(outcomes.map((o) => ('reason' in o ? o.reason : 'ok'))).toEqual([
      ...Array<string>(5).fill('wrong'),
      ...Array<string>(3).fill('locked'),
    ]);
  });

  it('counts a burst spread over several processes one at a time too', async () => {
    await requireRedis('test/unit/http/dashboard/throttle.test.ts');
    // Two processes of one deployment: each its own store handle and Redis coordination.
    const prefix = randomPrefix('throttle');
    const processes = [0, 1].map(() => ({
      store: new SqliteStore(join(dir, 'toolgate.db')),
      coordination: openRedisCoordination({ url: TEST_REDIS_URL, prefix, onBusError: () => {} }),
    }));
    try {
      const throttles = processes.map((p) => new SignInThrottle(p.store, p.coordination.lock, WINDOW_MS));
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, (_, i) => throttles[i % 2]!.attempt('10.0.0.9', 'guess')),
      );
      const reasons = outcomes.map((o) => ('reason' in o ? o.reason : 'ok'));
      expect(reasons.filter((r) => r === 'wrong')).toHaveLength(5);
      expect(reasons.filter((r) => r === 'locked')).toHaveLength(3);
    } finally {
      for (const p of processes) {
        await p.coordination.close();
        await p.store.close();
      }
      await deleteKeys(prefix);
    }
  });

  it("clears an address's failures when it signs in, and says when no password is set", async () => {
    await failed('10.0.0.1', 4, 1_000);
    await expect(throttle.attempt('10.0.0.1', PASSWORD)).resolves.toEqual({ ok: true, value: true });
    expect(await store.dashboard.listSignInFailures(new Date(0).toISOString())).toEqual([]);

    const empty = new SqliteStore(':memory:');
    await empty.migrate();
    await expect(
      new SignInThrottle(empty, new MemoryLock(), WINDOW_MS).attempt('10.0.0.1', PASSWORD),
    ).resolves.toEqual({
      ok: false,
      reason: 'unset',
    });
    await empty.close();
  });

  it('replacing the password signs every session out and clears the failures', async () => {
    await failed('10.0.0.1', 5, 1_000);
    const at = new Date().toISOString();
    await store.dashboard.createSession('hash', {
      csrfToken: 't',
      createdAt: at,
      expiresAt: '2999-01-01T00:00:00Z',
    });
    await store.dashboard.setPasswordHash(await hashPassword('another long passphrase'), {
      onlyIfUnset: false,
    });
    expect(await store.dashboard.getSession('hash', at)).toBeUndefined();
    await expect(throttle.attempt('10.0.0.1', 'another long passphrase')).resolves.toEqual({
      ok: true,
      value: true,
    });
    // A first-start password never replaces one that is set.
    expect(await store.dashboard.setPasswordHash('scrypt$x', { onlyIfUnset: true })).toBe(false);
  });
});
