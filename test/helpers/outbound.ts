import { afterEach } from 'vitest';
import { OutboundClient, type OutboundOptions } from '../../core/upstream/outbound.js';

/**
 * Returns a maker of OutboundClients with `defaults` (each call's options over them) and closes every
 * client it made after each test. Call it in a file or describe block: it registers that afterEach.
 */
export function useOutboundClients(
  defaults: OutboundOptions,
): (options?: Partial<OutboundOptions>) => OutboundClient {
  const clients: OutboundClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  return (options = {}) => {
    const created = new OutboundClient({ ...defaults, ...options });
    clients.push(created);
    return created;
  };
}
