import { describe, expect, it } from 'vitest';
import { MemoryBus } from '../../../core/coordination/bus.js';
import { openCoordination } from '../../../core/coordination/index.js';
import { MemoryLock } from '../../../core/coordination/lock.js';
import { describeCoordinationContract } from './contract.js';

// One process is the whole deployment: both "processes" of the contract are the one instance.
describeCoordinationContract(
  'memory',
  () => {
    const busErrors: unknown[] = [];
    const coordination = openCoordination({ onBusError: (error) => busErrors.push(error) });
    return Promise.resolve({
      one: coordination,
      two: coordination,
      busErrors,
      cleanup: () => coordination.close(),
    });
  },
  'one',
);

describe('the memory coordination (memory only)', () => {
  it('is what openCoordination opens without a Redis URL', async () => {
    const coordination = openCoordination({ onBusError: () => {}, redisUrl: undefined });
    try {
      expect(coordination.bus).toBeInstanceOf(MemoryBus);
      expect(coordination.lock).toBeInstanceOf(MemoryLock);
    } finally {
      await coordination.close();
    }
  });

  it('delivers within publish, before it resolves', async () => {
    const coordination = openCoordination({ onBusError: () => {} });
    const seen: string[] = [];
    coordination.bus.subscribe('key.revoked', (e) => seen.push(e.keyId));
    const published = coordination.bus.publish({ type: 'key.revoked', keyId: 'key_1' });
    expect(seen).toEqual(['key_1']);
    await published;
    await coordination.close();
  });
});
