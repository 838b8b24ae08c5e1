import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, GENERATIONS, SYSTEM_TOOLS, type TestClient } from '../../helpers/clients.js';
import { startGateway, until, type TestGateway } from '../../helpers/gateway.js';
import { scopeKey } from '../../../core/domain.js';

let tg: TestGateway;
let platformKey: string;
let platformClientId: string;

beforeAll(async () => {
  tg = await startGateway();
  platformKey = (await tg.key('platform', 'platform-co')).key;
  platformClientId = (await tg.gateway.keys.list()).find((k) => k.clientName === 'platform-co')!.clientId;
});
afterAll(() => tg.close());

describe.each(GENERATIONS)('MCP generation %s', (generation) => {
  it('lists and calls the system tools', async () => {
    const client = await connect(generation, tg.mcpUrl('?user_id=alice'), { 'X-API-Key': platformKey });
    try {
      expect(await client.listToolNames()).toEqual(SYSTEM_TOOLS);
      const result = await client.callTool('report_problem', {
        summary: `calendar sync fails (${generation})`,
      });
      expect(result.isError).toBeFalsy();
      const text = result.content[0]?.text ?? '';
      const id = /rep_[0-9a-f]{16}/.exec(text)?.[0];
      expect(id).toBeDefined();
      const stored = await tg.gateway.store.reports.listForScope({
        clientId: platformClientId,
        orgId: null,
        userId: 'alice',
      });
      expect(stored.map((r) => r.id)).toContain(id);
    } finally {
      await client.close();
    }
  });

  it('answers an unknown tool and invalid arguments as protocol errors naming the problem', async () => {
    const client = await connect(generation, tg.mcpUrl(), { Authorization: `Bearer ${platformKey}` });
    try {
      await expect(client.callTool('no_such_tool')).rejects.toThrow(/Unknown tool: no_such_tool/);
      await expect(client.callTool('report_problem', { details: 'no summary' })).rejects.toThrow(
        /argument `summary` is required/,
      );
    } finally {
      await client.close();
    }
  });
});

describe('tools/list_changed notifications', () => {
  it('reach only the listeners of the scope that changed, in every generation', async () => {
    const received = new Map<string, number>();
    const arrivals = new EventEmitter();
    const clients: TestClient[] = [];
    const scopes: string[] = [];
    try {
      for (const [i, generation] of GENERATIONS.entries()) {
        for (const org of ['org-a', 'org-b']) {
          const label = `${generation} ${org}`;
          received.set(label, 0);
          const client = await connect(generation, tg.mcpUrl(`?org_id=${org}&user_id=u${i}`), {
            'X-API-Key': platformKey,
          });
          clients.push(client);
          await client.watchToolsChanged(() => {
            received.set(label, received.get(label)! + 1);
            arrivals.emit('notification');
          });
          scopes.push(scopeKey({ clientId: platformClientId, orgId: org, userId: `u${i}` }));
        }
      }
      // Every client holds its event stream open before anything is sent.
      await until(tg.gateway.mcp.hub, 'change', () => tg.gateway.mcp.hub.size >= clients.length);

      const orgA = scopes.filter((_, i) => i % 2 === 0);
      const orgB = scopes.filter((_, i) => i % 2 === 1);
      const gotAll = (org: string, count: number) => () =>
        [...received].filter(([label]) => label.endsWith(org)).every(([, n]) => n === count);

      for (const scope of orgA) tg.gateway.mcp.toolsChanged(scope);
      await until(arrivals, 'notification', gotAll('org-a', 1));
      // Then org-b's own notification: had org-a's leaked there, it would have arrived first.
      for (const scope of orgB) tg.gateway.mcp.toolsChanged(scope);
      await until(arrivals, 'notification', gotAll('org-b', 1));
      expect(Object.fromEntries(received)).toEqual(
        Object.fromEntries([...received.keys()].map((k) => [k, 1])),
      );
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });
});
