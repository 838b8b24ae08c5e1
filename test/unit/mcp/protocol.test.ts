import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createApp } from '../../../core/http/app.js';
import { encodeResultBytes, rpcText, sendRpc, type RpcBody } from '../../../core/mcp/protocol.js';

let app: FastifyInstance | undefined;
afterEach(() => app?.close());

/** Serves one RpcBody on a real loopback port and fetches it. */
async function served(body: RpcBody): Promise<Response> {
  app = createApp({ logLevel: 'silent' });
  app.post('/rpc', (_request, reply) => sendRpc(reply, body));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return fetch(`${url}/rpc`, { method: 'POST' });
}

describe('sendRpc', () => {
  it.each([
    ['a small message assembled from parts', 200],
    ['a large one, sent part by part', 5_000],
  ])('delivers %s whole, with its length', async (_label, tools) => {
    const list = Buffer.from(
      JSON.stringify(Array.from({ length: tools }, (_, i) => ({ name: `tool_${i}` }))),
    );
    const body = encodeResultBytes(7, [Buffer.from('{"tools":'), list, Buffer.from('}')]);
    const response = await served(body);
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(text).toBe(rpcText(body));
    const parsed = JSON.parse(text) as { id: number; result: { tools: unknown[] } };
    expect(parsed.id).toBe(7);
    expect(parsed.result.tools).toHaveLength(tools);
  });
});
