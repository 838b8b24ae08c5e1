/**
 * How Toolgate authenticates at a token endpoint its upstream's metadata named, for each method a
 * registration or metadata document can end up with, against a loopback token endpoint that records
 * the request as sent: a public client (`none`) sends its client_id and no secret, the others their
 * secret in the Basic header or the body; every request carries RFC 8707's resource.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../core/config.js';
import type { ProviderEntry } from '../../../core/catalog/types.js';
import { authorizationClient, resourceParams } from '../../../core/connections/oauth/client.js';
import type { ResolvedApp } from '../../../core/connections/oauth-apps.js';
import type { UpstreamOAuthServer } from '../../../core/store/types.js';
import { OutboundClient } from '../../../core/upstream/outbound.js';
import { jsonAnswer, startReceiver, type Receiver } from '../../helpers/receiver.js';

let endpoint: Receiver;
let outbound: OutboundClient;
const config = loadConfig({
  TOOLGATE_BASE_URL: 'https://toolgate.example',
  TOOLGATE_ALLOW_PRIVATE_NETWORK: '1',
});
const provider = {
  id: 'notes',
  spec: { auth: { kind: 'oauth2', discovery: 'mcp' } },
} as unknown as ProviderEntry;

beforeAll(async () => {
  endpoint = await startReceiver(() =>
    jsonAnswer(200, { access_token: 'at-1', token_type: 'Bearer', expires_in: 60 }),
  );
  outbound = new OutboundClient({
    allowPrivateNetwork: true,
    timeoutMs: 5_000,
    maxResponseBytes: 1024,
    maxRedirects: 0,
  });
});
afterAll(async () => {
  await outbound?.close();
  await endpoint?.close();
});

function app(authMethod: UpstreamOAuthServer['authMethod'], clientSecret: string): ResolvedApp {
  return {
    id: 'app_1',
    clientId: 'https://toolgate.example/oauth/upstream-client.json',
    clientSecret,
    branding: null,
    orgId: null,
    server: {
      method: authMethod === 'none' ? 'cimd' : 'dcr',
      issuer: endpoint.url,
      authorizationUrl: `${endpoint.url}/authorize`,
      tokenUrl: `${endpoint.url}/token`,
      revocationUrl: null,
      authMethod,
      resource: 'https://mcp.notes.example/mcp',
      scopes: [],
      app: null,
    },
  };
}

/** Exchanges a code as the callback does, and returns the request the token endpoint received. */
async function exchange(client: ResolvedApp) {
  await authorizationClient(provider, client, { config, outbound }).getToken({
    code: 'code-1',
    redirect_uri: 'https://toolgate.example/oauth/callback',
    ...resourceParams(client),
  });
  const request = endpoint.received.at(-1)!;
  return {
    form: Object.fromEntries(new URLSearchParams(request.body)),
    authorization: request.headers.authorization,
  };
}

describe('token requests to an endpoint that metadata named', () => {
  it('a public client sends its client_id and no secret', async () => {
    const { form, authorization } = await exchange(app('none', ''));
    expect(authorization).toBeUndefined();
    expect(form).toEqual({
      grant_type: 'authorization_code',
      code: 'code-1',
      redirect_uri: 'https://toolgate.example/oauth/callback',
      resource: 'https://mcp.notes.example/mcp',
      client_id: 'https://toolgate.example/oauth/upstream-client.json',
    });
  });

  it('client_secret_post sends the secret in the body, client_secret_basic in the Basic header', async () => {
    const post = await exchange(app('client_secret_post', 's3cret'));
    expect(post.authorization).toBeUndefined();
    expect(post.form).toMatchObject({ client_id: app('none', '').clientId, client_secret: 's3cret' });
    const basic = await exchange(app('client_secret_basic', 's3cret'));
    expect(basic.authorization).toMatch(/^Basic /);
    expect(basic.form.client_secret).toBeUndefined();
    expect(basic.form.resource).toBe('https://mcp.notes.example/mcp');
  });
});
