/**
 * The audit trail's writer on a real SQLite store: when its buffered entries reach the table
 * (TOOLGATE_AUDIT_FLUSH_MS, or 512 waiting), and the time it stamps them with.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuditLog, auditTime } from '../../../core/store/audit-log.js';
import { SqliteStore } from '../../../core/store/sqlite/index.js';

let store: SqliteStore;
let failures: unknown[];

beforeEach(async () => {
  store = new SqliteStore(':memory:');
  await store.migrate();
  failures = [];
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(async () => {
  vi.useRealTimers();
  await store.close();
});

const stored = async (): Promise<number> => (await store.audit.list({ limit: 10_000 })).length;

function writer(flushMs?: number): AuditLog {
  return new AuditLog(store.audit, {
    enabled: true,
    ...(flushMs !== undefined ? { flushMs } : {}),
    onError: (error) => failures.push(error),
  });
}

describe('AuditLog', () => {
  it('writes an entry once it has waited the flush interval, not before (1 s by default)', async () => {
    const quick = writer(250);
    quick.record({ event: 'key_created', keyId: 'key_1' });
    await vi.advanceTimersByTimeAsync(249);
    expect(await stored()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(await stored()).toBe(1);

    const standard = writer();
    standard.record({ event: 'key_revoked', keyId: 'key_1' });
    await vi.advanceTimersByTimeAsync(999);
    expect(await stored()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await stored()).toBe(2);
    expect(failures).toEqual([]);
  });

  it('writes 512 waiting entries at once, whatever the interval', async () => {
    const log = writer(60_000);
    for (let i = 0; i < 511; i++) log.record({ event: 'tool_call', tool: 'list_providers' });
    await vi.advanceTimersByTimeAsync(0);
    expect(await stored()).toBe(0);
    log.record({ event: 'tool_call', tool: 'list_providers' });
    await vi.advanceTimersByTimeAsync(0);
    expect(await stored()).toBe(512);
    expect(failures).toEqual([]);
  });

  it('lists entries of one millisecond in the order they were recorded, a refused batch among them', async () => {
    let refuse = true;
    const log = new AuditLog(
      {
        append: (entries) =>
          refuse ? Promise.reject(new Error('database is locked')) : store.audit.append(entries),
        list: (filter) => store.audit.list(filter),
        purge: (before) => store.audit.purge(before),
      },
      { enabled: true, onError: (error) => failures.push(error) },
    );
    for (const tool of ['first', 'second', 'third']) log.record({ event: 'tool_call', tool });
    await log.flush();
    expect(failures).toHaveLength(1);
    refuse = false;
    for (const tool of ['fourth', 'fifth']) log.record({ event: 'tool_call', tool });
    await log.close();
    const listed = await store.audit.list({ limit: 10 });
    // Newest first: the same time for all five (the clock is frozen), so the ids alone order them.
    expect(listed.map((entry) => entry.tool)).toEqual(['fifth', 'fourth', 'third', 'second', 'first']);
    expect(new Set(listed.map((entry) => entry.id)).size).toBe(5);
  });

  it('records nothing when the trail is off', async () => {
    const off = new AuditLog(store.audit, { enabled: false, onError: (error) => failures.push(error) });
    expect(off.enabled).toBe(false);
    off.record({ event: 'key_created', keyId: 'key_1' });
    await off.close();
    expect(await stored()).toBe(0);
  });
});

describe('auditTime', () => {
  it('is the ISO time of now, within a second, across seconds and at every width of milliseconds', () => {
    for (const iso of [
      '2026-11-28T04:20:31.000Z',
      '2026-11-28T04:20:31.007Z',
      '2026-11-28T04:20:31.007Z',
      '2026-11-28T04:20:31.042Z',
      '2026-11-28T04:20:31.999Z',
      '2026-11-28T04:20:32.001Z',
      '2026-11-28T04:20:32.500Z',
      '2026-12-31T23:59:59.999Z',
      '2027-01-01T00:00:00.010Z',
    ]) {
      vi.setSystemTime(new Date(iso));
      expect(auditTime()).toBe(iso);
    }
  });
});
