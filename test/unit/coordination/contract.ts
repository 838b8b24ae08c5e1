import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/eventually.js';
import type { Bus, BusEvent, BusEventType } from '../../../core/coordination/bus.js';
import type { Coordination } from '../../../core/coordination/coordination.js';
import { LockTimeoutError, type Lease, type TryResult } from '../../../core/coordination/lock.js';
import type { ProcessRecord } from '../../../core/coordination/processes.js';
import type { SessionRecord } from '../../../core/coordination/sessions.js';
import { scopeKey, type Scope } from '../../../core/domain.js';

/**
 * Two processes of one deployment on a fresh backend, for one test. For the in-memory coordination
 * one process is the whole deployment, so `one` and `two` are the same instance: the cases then
 * check what a single process sees, and those that need a second process to crash or a lock to lapse
 * under a live holder (`spawn`, `lapse`) are not registered.
 */
export interface CoordinationFixture {
  one: Coordination;
  two: Coordination;
  /** Every error either process's bus reported (its onBusError). */
  busErrors: unknown[];
  /** Opens one more process of the deployment; its `close()` stands for a crash. Absent for memory. */
  spawn?: () => Coordination;
  /** Makes the lock `name` lapse now, as if its holder had paused past its ttl. Absent for memory. */
  lapse?: (name: string) => Promise<void>;
  /** Closes every process (spawned ones included) and removes what the test stored. */
  cleanup(): Promise<void>;
}

export type CoordinationFactory = () => Promise<CoordinationFixture>;

const SCOPE: Scope = { clientId: 'cli_1', orgId: null, userId: 'user-7' };

function session(id: string, overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    transport: 'streamable',
    clientId: SCOPE.clientId,
    scope: SCOPE,
    scopeKey: scopeKey(SCOPE),
    protocolVersion: '2025-06-18',
    elicitUrl: false,
    lastSeenAt: 1_000,
    ...overrides,
  };
}

/** The next event of `type` on `bus` (subscribe before the publish that should bring it). */
function next<T extends BusEventType>(bus: Bus, type: T): Promise<Extract<BusEvent, { type: T }>> {
  return new Promise((resolve) => {
    const off = bus.subscribe(type, (event) => {
      off();
      resolve(event);
    });
  });
}

/**
 * Publishes a marker from `from` and waits until it reached `to`: a networked bus keeps the order
 * of one channel, so every event published before it has been dispatched by then.
 */
async function drain(from: Coordination, to: Coordination): Promise<void> {
  const id = `marker-${Math.random()}`;
  const marker: BusEvent = { type: 'catalog.changed', providers: [id] };
  const arrived = new Promise<void>((resolve) => {
    const off = to.bus.subscribe('catalog.changed', (event) => {
      if (event.providers[0] !== id) return;
      off();
      resolve();
    });
  });
  await from.bus.publish(marker);
  await arrived;
}

/** A promise and the function that settles it, to hold work under a lock until the test lets go. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const free = (coordination: Coordination, name: string): Promise<boolean> =>
  coordination.lock.tryWith(name, 1_000, () => Promise.resolve()).then((r) => r.ran);

/**
 * What every coordination (in memory, Redis) must do: the bus, named locks with leases, and the
 * session records, as seen from two processes of one deployment.
 */
export function describeCoordinationContract(
  name: string,
  factory: CoordinationFactory,
  /** `many`: the factory gives `spawn` and `lapse`, so the cases of a crashed or lapsed holder apply. */
  processes: 'one' | 'many',
): void {
  describe(`${name}: the coordination contract`, { timeout: 15_000 }, () => {
    let f: CoordinationFixture;

    beforeEach(async () => {
      f = await factory();
    });
    afterEach(async () => {
      await f.cleanup();
    });

    describe('the bus', () => {
      it('delivers an event to the subscribers of its type only', async () => {
        const seen: string[] = [];
        f.one.bus.subscribe('key.revoked', (e) => seen.push(`a:${e.keyId}`));
        f.one.bus.subscribe('key.revoked', (e) => seen.push(`b:${e.keyId}`));
        f.one.bus.subscribe('connection.changed', (e) => seen.push(`c:${e.provider}`));
        await f.one.bus.publish({ type: 'key.revoked', keyId: 'key_1' });
        await drain(f.one, f.one);
        expect(seen).toEqual(['a:key_1', 'b:key_1']);
      });

      it("delivers to every process, the publisher's own included", async () => {
        const event: BusEvent = { type: 'connection.changed', scope: SCOPE, provider: 'github' };
        const toOne = next(f.one.bus, 'connection.changed');
        const toTwo = next(f.two.bus, 'connection.changed');
        await f.one.bus.publish(event);
        expect(await Promise.all([toOne, toTwo])).toEqual([event, event]);

        const back: BusEvent = { type: 'key.revoked', keyId: 'key_2' };
        const backToOne = next(f.one.bus, 'key.revoked');
        const backToTwo = next(f.two.bus, 'key.revoked');
        await f.two.bus.publish(back);
        expect(await Promise.all([backToOne, backToTwo])).toEqual([back, back]);
      });

      it('keeps its continuity while it hears every event', async () => {
        const before = f.one.bus.continuity();
        expect(before).toEqual(expect.any(Number));
        const heard = next(f.one.bus, 'key.revoked');
        await f.two.bus.publish({ type: 'key.revoked', keyId: 'key_3' });
        await heard;
        expect(f.one.bus.continuity()).toBe(before);
      });

      it('stops delivering to a handler once unsubscribed', async () => {
        const seen: string[] = [];
        const off = f.two.bus.subscribe('key.revoked', (e) => seen.push(e.keyId));
        await f.one.bus.publish({ type: 'key.revoked', keyId: 'before' });
        await drain(f.one, f.two);
        off();
        await f.one.bus.publish({ type: 'key.revoked', keyId: 'after' });
        await drain(f.one, f.two);
        expect(seen).toEqual(['before']);
      });

      it('goes on to the other handlers when one throws, and reports the throw', async () => {
        const boom = new Error('handler failed');
        const seen: string[] = [];
        f.two.bus.subscribe('key.revoked', () => {
          throw boom;
        });
        f.two.bus.subscribe('key.revoked', (e) => seen.push(e.keyId));
        await f.one.bus.publish({ type: 'key.revoked', keyId: 'key_3' });
        await drain(f.one, f.two);
        expect(seen).toEqual(['key_3']);
        expect(f.busErrors).toEqual([boom]);
      });
    });

    describe('the lock', () => {
      it('runs work once when free, and refuses at once while held, in either process', async () => {
        let runs = 0;
        const result = await f.one.lock.tryWith('job:a', 10_000, async () => {
          runs++;
          expect(await f.two.lock.tryWith('job:a', 10_000, () => Promise.resolve(runs++))).toEqual({
            ran: false,
          });
          expect(await f.one.lock.tryWith('job:a', 10_000, () => Promise.resolve(runs++))).toEqual({
            ran: false,
          });
          // Another name is another lock.
          expect(await free(f.two, 'job:b')).toBe(true);
          return 'done';
        });
        expect(result).toEqual({ ran: true, value: 'done' });
        expect(runs).toBe(1);
      });

      it('releases after the work, also when the work throws (whose error is the rejection)', async () => {
        await f.one.lock.tryWith('job:a', 10_000, () => Promise.resolve());
        expect(await free(f.two, 'job:a')).toBe(true);

        const failure = new Error('work failed');
        await expect(f.one.lock.tryWith('job:a', 10_000, () => Promise.reject(failure))).rejects.toBe(
          failure,
        );
        expect(await free(f.two, 'job:a')).toBe(true);
        await expect(f.two.lock.with('job:a', 10_000, 1_000, () => Promise.reject(failure))).rejects.toBe(
          failure,
        );
        expect(await free(f.one, 'job:a')).toBe(true);
      });

      it('gives every acquisition a greater fence, across processes', async () => {
        const fence = (lease: Lease) => Promise.resolve(lease.fence);
        const first = await f.one.lock.tryWith('job:a', 10_000, fence);
        const second = await f.two.lock.tryWith('job:a', 10_000, fence);
        const third = await f.one.lock.with('job:a', 10_000, 1_000, fence);
        const other = await f.two.lock.tryWith('job:b', 10_000, fence);
        if (!first.ran || !second.ran || !other.ran) throw new Error('a free lock was refused');
        expect(second.value).toBeGreaterThan(first.value);
        expect(third).toBeGreaterThan(second.value);
        expect(other.value).toBeGreaterThanOrEqual(1);
      });

      it('keeps the lock past its ttl while the work runs', async () => {
        const ttl = 300;
        const result = await f.one.lock.tryWith('job:long', ttl, async (lease) => {
          // Time must pass here: three ttls, across which the holder extends the lock.
          await sleep(3 * ttl);
          expect(await free(f.two, 'job:long')).toBe(false);
          expect(await lease.held()).toBe(true);
          return lease;
        });
        if (!result.ran) throw new Error('a free lock was refused');
        expect(await result.value.held()).toBe(false);
        expect(await free(f.two, 'job:long')).toBe(true);
      });

      it('waits in `with` for a release, then runs the work', async () => {
        const order: string[] = [];
        const holding = gate();
        const entered = gate();
        const first = f.one.lock.tryWith('job:a', 10_000, async () => {
          order.push('first');
          entered.open();
          await holding.opened;
          order.push('first done');
        });
        await entered.opened;
        const second = f.two.lock.with('job:a', 10_000, 5_000, (lease) => {
          order.push('second');
          return Promise.resolve(lease.fence);
        });
        // Not before the holder lets go: `second` must still be waiting after a drain of the bus.
        await drain(f.one, f.two);
        expect(order).toEqual(['first']);
        holding.open();
        await first;
        expect(await second).toBeGreaterThan(0);
        expect(order).toEqual(['first', 'first done', 'second']);
      });

      it('rejects `with` with a LockTimeoutError when the lock is not had within waitMs', async () => {
        const holding = gate();
        const entered = gate();
        const first = f.one.lock.tryWith('job:a', 10_000, async () => {
          entered.open();
          await holding.opened;
        });
        await entered.opened;
        let ran = false;
        const started = Date.now();
        const waited = f.two.lock.with('job:a', 10_000, 150, () => Promise.resolve((ran = true)));
        await expect(waited).rejects.toBeInstanceOf(LockTimeoutError);
        await expect(waited).rejects.toMatchObject({ lockName: 'job:a', waitMs: 150 });
        expect(Date.now() - started).toBeGreaterThanOrEqual(140);
        expect(ran).toBe(false);
        holding.open();
        await first;
      });

      // One process cannot crash under its own feet or see its lock lapse: these need several.
      if (processes === 'many') {
        it('lets another process take the lock of a crashed holder once its ttl is up', async () => {
          if (!f.spawn) throw new Error('a factory of several processes gives spawn');
          const dying = f.spawn();
          const entered = gate();
          // Work that never finishes, in a process that then dies: nobody releases or extends the lock.
          void dying.lock.tryWith('job:crash', 200, () => {
            entered.open();
            return new Promise<never>(() => {});
          });
          await entered.opened;
          await dying.close();
          expect(await free(f.one, 'job:crash')).toBe(false);
          await eventually(() => free(f.one, 'job:crash'));
        });

        it("tells a holder it lost the lock to a takeover, and its release leaves the new holder's lock", async () => {
          const lapse = f.lapse;
          if (!lapse) throw new Error('a factory of several processes gives lapse');
          const successorHolding = gate();
          const successorEntered = gate();
          let successor: Promise<TryResult<number>> | undefined;
          const first = await f.one.lock.tryWith('job:a', 10_000, async (lease) => {
            expect(await lease.held()).toBe(true);
            await lapse('job:a');
            successor = f.two.lock.tryWith('job:a', 10_000, async (next) => {
              successorEntered.open();
              await successorHolding.opened;
              return next.fence;
            });
            await Promise.race([successorEntered.opened, successor]);
            expect(await lease.held()).toBe(false);
            return lease.fence;
          });
          // The first holder has finished and released: only its own acquisition, not its successor's.
          expect(await free(f.one, 'job:a')).toBe(false);
          successorHolding.open();
          const second = await successor;
          if (!first.ran || !second?.ran) throw new Error('a free lock was refused');
          expect(second.value).toBeGreaterThan(first.value);
          expect(await free(f.one, 'job:a')).toBe(true);
        });
      }
    });

    describe('the sessions', () => {
      it('creates, reads, updates and deletes a session', async () => {
        const { sessions } = f.one;
        expect(await sessions.get('s1')).toBeUndefined();
        await sessions.create(
          session('s1', { transport: 'sse', protocolVersion: undefined, elicitUrl: true }),
        );
        const created = await sessions.get('s1');
        expect(created).toEqual(
          session('s1', { transport: 'sse', protocolVersion: undefined, elicitUrl: true }),
        );

        await sessions.update('s1', { protocolVersion: '2024-11-05' });
        await sessions.update('s1', { lastSeenAt: 5_000 });
        expect(await sessions.get('s1')).toEqual(
          session('s1', {
            transport: 'sse',
            protocolVersion: '2024-11-05',
            elicitUrl: true,
            lastSeenAt: 5_000,
          }),
        );
        // What get returned earlier is a copy: later updates do not reach it.
        expect(created?.lastSeenAt).toBe(1_000);

        // Replacing a session keeps nothing of the old one.
        await sessions.create(session('s1', { protocolVersion: undefined }));
        expect(await sessions.get('s1')).toEqual(session('s1', { protocolVersion: undefined }));

        await sessions.delete('s1');
        expect(await sessions.get('s1')).toBeUndefined();
        await sessions.delete('s1');
        expect(await sessions.count()).toBe(0);
      });

      it('ignores an update of an unknown session', async () => {
        await f.one.sessions.update('gone', { lastSeenAt: 9_000, protocolVersion: '2025-06-18' });
        expect(await f.one.sessions.get('gone')).toBeUndefined();
        expect(await f.one.sessions.count()).toBe(0);
        expect(await f.one.sessions.idleSince(Number.MAX_SAFE_INTEGER)).toEqual([]);
      });

      it('counts sessions and finds those idle since before a time', async () => {
        const { sessions } = f.one;
        await sessions.create(session('old', { lastSeenAt: 1_000 }));
        await sessions.create(session('edge', { lastSeenAt: 2_000 }));
        await sessions.create(session('new', { lastSeenAt: 3_000 }));
        expect(await sessions.count()).toBe(3);
        expect(await sessions.idleSince(2_000)).toEqual(['old']);
        expect((await sessions.idleSince(2_001)).sort()).toEqual(['edge', 'old']);

        await sessions.update('old', { lastSeenAt: 4_000 });
        expect(await sessions.idleSince(2_001)).toEqual(['edge']);
        await sessions.delete('edge');
        expect(await sessions.idleSince(2_001)).toEqual([]);
        expect(await sessions.count()).toBe(2);
      });

      it('serves a session created in one process to the other', async () => {
        await f.one.sessions.create(session('shared', { protocolVersion: undefined }));
        expect(await f.two.sessions.get('shared')).toEqual(session('shared', { protocolVersion: undefined }));
        await f.two.sessions.update('shared', { protocolVersion: '2025-03-26', lastSeenAt: 7_000 });
        expect(await f.one.sessions.get('shared')).toEqual(
          session('shared', { protocolVersion: '2025-03-26', lastSeenAt: 7_000 }),
        );
        expect(await f.two.sessions.count()).toBe(1);
        await f.two.sessions.delete('shared');
        expect(await f.one.sessions.get('shared')).toBeUndefined();
        expect(await f.one.sessions.count()).toBe(0);
      });

      it('keeps the tool list a session was opened with (issue 15), in every process', async () => {
        await f.one.sessions.create(session('compact', { surface: 'compact' }));
        await f.one.sessions.create(session('auto'));
        expect(await f.two.sessions.get('compact')).toEqual(session('compact', { surface: 'compact' }));
        expect(await f.two.sessions.get('auto')).toEqual(session('auto'));
      });
    });

    describe('the process directory', () => {
      const record = (id: string, fingerprint: string): ProcessRecord => ({
        id,
        host: 'gw-1',
        pid: 100,
        startedAt: '2026-11-23T10:00:00.000Z',
        catalog: { version: 1, fingerprint },
        seenAt: '2026-11-23T10:00:05.000Z',
      });

      it('lists what each process announced, its latest announcement, to every process', async () => {
        await f.one.processes.announce(record('b', 'f1'), 60_000);
        await f.two.processes.announce(record('a', 'f1'), 60_000);
        await f.one.processes.announce(record('b', 'f2'), 60_000);
        expect(await f.two.processes.list()).toEqual([record('a', 'f1'), record('b', 'f2')]);
        await f.one.processes.withdraw('a');
        expect(await f.two.processes.list()).toEqual([record('b', 'f2')]);
      });

      it('drops a process that stopped announcing itself once its ttl is up', async () => {
        await f.one.processes.announce(record('gone', 'f1'), 50);
        await f.one.processes.announce(record('live', 'f1'), 60_000);
        await eventually(async () => (await f.two.processes.list()).length === 1);
        expect(await f.two.processes.list()).toEqual([record('live', 'f1')]);
      });
    });
  });
}
