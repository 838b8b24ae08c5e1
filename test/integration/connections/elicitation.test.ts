import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, until, type TestGateway } from '../../helpers/gateway.js';
import { PETSHOP_MANIFESTS } from '../../helpers/petshop.js';

let tg: TestGateway;

beforeAll(async () => {
  tg = await startGateway({}, { manifestFiles: PETSHOP_MANIFESTS });
});
afterAll(() => tg.close());

describe('URL-mode elicitation', () => {
  it('offers the secure link through the client when it declares URL elicitation (2025-11-25)', async () => {
    const { key } = await tg.key('client');
    const client = new Client(
      { name: 'elicitor', version: '1.0.0' },
      { capabilities: { elicitation: { url: {} } } },
    );
    const offered = new Promise<ElicitRequest['params']>((resolve) => {
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        resolve(request.params);
        return { action: 'accept' };
      });
    });
    await client.connect(
      new StreamableHTTPClientTransport(tg.mcpUrl('?user_id=u1'), {
        requestInit: { headers: { 'X-API-Key': key } },
      }),
    );
    await until(tg.gateway.mcp.hub, 'change', () => tg.gateway.mcp.hub.size === 1);
    const result = await client.callTool({ name: 'connect_provider', arguments: { provider: 'petshop' } });
    const text = (result.content as { text: string }[])[0]!.text;
    const params = await offered;
    expect(params).toMatchObject({ mode: 'url', message: expect.stringContaining('Pet Shop') as unknown });
    expect(text).toContain((params as { url: string }).url);
    await client.close();
  });
});
