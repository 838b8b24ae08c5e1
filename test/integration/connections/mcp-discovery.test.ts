/**
 * MCP authorization discovery against loopback stand-ins speaking the real metadata shapes (RFC 9728
 * protected-resource metadata, RFC 8414 authorization-server metadata), through the real outbound
 * client with its private-network guard ON: the stand-ins' own origins are trusted, as an operator
 * trusts one internal service, so a URL the metadata points anywhere else is judged by the guard.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerParams, McpDiscovery } from '../../../core/connections/oauth/discovery.js';
import { get } from 'node:http';
import { OutboundBlockedError, OutboundClient } from '../../../core/upstream/outbound.js';
import {
  jsonAnswer,
  startReceiver,
  type Answer,
  type Receiver,
  type Received,
} from '../../helpers/receiver.js';

let upstream: Receiver;
let issuer: Receiver;
let outbound: OutboundClient;
/** How the stand-ins answer, per test. */
let answerUpstream: (req: Received) => Answer;
let answerIssuer: (req: Received) => Answer;

const asMetadata = (overrides: Record<string, unknown> = {}) => ({
  issuer: issuer.url,
  authorization_endpoint: `${issuer.url}/authorize`,
  token_endpoint: `${issuer.url}/token`,
  registration_endpoint: `${issuer.url}/register`,
  code_challenge_methods_supported: ['S256'],
  ...overrides,
});

beforeAll(async () => {
  upstream = await startReceiver((req) => answerUpstream(req));
  issuer = await startReceiver((req) => answerIssuer(req));
  outbound = new OutboundClient({
    allowPrivateNetwork: false,
    timeoutMs: 5_000,
    maxResponseBytes: 1024 * 1024,
    maxRedirects: 2,
    trustedOrigins: [upstream.url, issuer.url],
  });
});
afterAll(async () => {
  await outbound?.close();
  await upstream?.close();
  await issuer?.close();
});

/** A fresh discovery (no cache carried between tests) of the upstream's /mcp. */
const discover = () => new McpDiscovery(outbound, true).discover('notes', `${upstream.url}/mcp`);

describe('MCP authorization discovery', () => {
  it("follows the 401's resource_metadata to the authorization server, and asks for the challenge's scopes", async () => {
    answerUpstream = (req) =>
      req.url === '/mcp'
        ? jsonAnswer(
            401,
            { error: 'invalid_token' },
            {
              'www-authenticate': `Bearer realm="notes", resource_metadata="${upstream.url}/meta/notes", scope="notes:read notes:write"`,
            },
          )
        : req.url === '/meta/notes'
          ? jsonAnswer(200, {
              resource: `${upstream.url}/mcp`,
              authorization_servers: [issuer.url],
              scopes_supported: ['x'],
            })
          : { status: 404 };
    answerIssuer = (req) =>
      req.url === '/.well-known/oauth-authorization-server' ? jsonAnswer(200, asMetadata()) : { status: 404 };
    const found = await discover();
    expect(found).toMatchObject({
      issuer: issuer.url,
      authorizationUrl: `${issuer.url}/authorize`,
      tokenUrl: `${issuer.url}/token`,
      registrationUrl: `${issuer.url}/register`,
      revocationUrl: null,
      tokenAuthMethods: ['client_secret_basic'],
      metadataDocuments: false,
      resource: `${upstream.url}/mcp`,
      scopes: ['notes:read', 'notes:write'],
    });
    // The probe is an unauthenticated MCP initialize.
    const probe = upstream.received.find((r) => r.url === '/mcp');
    expect(probe?.headers.authorization).toBeUndefined();
    expect(JSON.parse(probe?.body ?? '{}')).toMatchObject({ method: 'initialize' });
  });

  it('falls back to the well-known URLs (RFC 9728 with the path, RFC 8414 then OpenID Connect with the issuer path)', async () => {
    answerUpstream = (req) =>
      req.url === '/mcp'
        ? { status: 401, headers: { 'www-authenticate': 'Bearer' } }
        : req.url === '/.well-known/oauth-protected-resource/mcp'
          ? jsonAnswer(200, {
              resource: upstream.url,
              authorization_servers: [`${issuer.url}/tenant`],
              scopes_supported: ['read'],
            })
          : { status: 404 };
    answerIssuer = (req) =>
      req.url === '/tenant/.well-known/openid-configuration'
        ? jsonAnswer(
            200,
            asMetadata({ issuer: `${issuer.url}/tenant`, client_id_metadata_document_supported: true }),
          )
        : { status: 404 };
    const found = await discover();
    expect(found).toMatchObject({
      issuer: `${issuer.url}/tenant`,
      resource: upstream.url,
      scopes: ['read'],
      metadataDocuments: true,
    });
    expect(issuer.received.slice(-3).map((r) => r.url)).toEqual([
      '/.well-known/oauth-authorization-server/tenant',
      '/.well-known/openid-configuration/tenant',
      '/tenant/.well-known/openid-configuration',
    ]);
  });

  it('refuses an authorization server without PKCE S256, saying why', async () => {
    answerUpstream = (req) =>
      req.url === '/mcp'
        ? { status: 401, headers: { 'www-authenticate': `Bearer resource_metadata="${upstream.url}/meta"` } }
        : jsonAnswer(200, { resource: `${upstream.url}/mcp`, authorization_servers: [issuer.url] });
    answerIssuer = () => jsonAnswer(200, asMetadata({ code_challenge_methods_supported: ['plain'] }));
    await expect(discover()).rejects.toThrow(
      `the authorization server ${issuer.url} does not support PKCE with S256 (its code_challenge_methods_supported: plain), which MCP authorization requires`,
    );
    answerIssuer = () => jsonAnswer(200, asMetadata({ code_challenge_methods_supported: undefined }));
    await expect(discover()).rejects.toThrow('code_challenge_methods_supported: none');
  });

  it('refuses a resource_metadata URL that points at a private address, without calling it', async () => {
    answerUpstream = () => ({
      status: 401,
      headers: { 'www-authenticate': 'Bearer resource_metadata="http://169.254.169.254/latest/meta-data"' },
    });
    await expect(discover()).rejects.toThrow(
      'could not read the protected-resource metadata of 127.0.0.1:' +
        `${new URL(upstream.url).port} (169.254.169.254 is not a public address (link-local))`,
    );
  });

  it('refuses metadata that names another resource, and metadata that is not JSON', async () => {
    answerUpstream = (req) =>
      req.url === '/mcp'
        ? { status: 401, headers: { 'www-authenticate': `Bearer resource_metadata="${upstream.url}/meta"` } }
        : jsonAnswer(200, { resource: 'https://elsewhere.example/mcp', authorization_servers: [issuer.url] });
    await expect(discover()).rejects.toThrow('names the resource https://elsewhere.example/mcp, not');
    answerUpstream = (req) =>
      req.url === '/mcp'
        ? { status: 401, headers: { 'www-authenticate': `Bearer resource_metadata="${upstream.url}/meta"` } }
        : { status: 200, body: '<html>', headers: { 'content-type': 'text/html' } };
    await expect(discover()).rejects.toThrow(`at ${upstream.url}/meta is not JSON`);
  });
});

describe('Bearer challenge parameters', () => {
  it('reads quoted and bare values of the Bearer challenge among others', () => {
    expect(
      bearerParams(
        'Basic realm="x", Bearer error="invalid_token", resource_metadata="https://a.example/m?x=\\"1\\"", scope=read',
      ),
    ).toEqual({ error: 'invalid_token', resource_metadata: 'https://a.example/m?x="1"', scope: 'read' });
    expect(bearerParams('Bearer resource_metadata="https://a.example/m", DPoP algs="ES256"')).toEqual({
      resource_metadata: 'https://a.example/m',
    });
    expect(bearerParams('Basic realm="x"')).toEqual({});
  });
});

describe('the agent for token endpoints that metadata named', () => {
  it('refuses a private IP literal up front, and a host name that resolves to one before connecting', async () => {
    const guarded = new OutboundClient({
      allowPrivateNetwork: false,
      timeoutMs: 5_000,
      maxResponseBytes: 1024,
      maxRedirects: 0,
      // Every name resolves to the stand-in's loopback address.
      lookup: (
        _host: string,
        _options: unknown,
        callback: (e: null, a: { address: string; family: number }[]) => void,
      ) => callback(null, [{ address: '127.0.0.1', family: 4 }]),
    });
    try {
      expect(() => guarded.nodeAgent('http://10.0.0.7/token')).toThrow(OutboundBlockedError);
      const agent = guarded.nodeAgent(`http://token.example:${new URL(issuer.url).port}/token`);
      const before = issuer.received.length;
      const failure = await new Promise<unknown>((resolve) => {
        get(`http://token.example:${new URL(issuer.url).port}/token`, { agent }, () => resolve(undefined)).on(
          'error',
          resolve,
        );
      });
      expect(failure).toBeInstanceOf(OutboundBlockedError);
      expect((failure as Error).message).toBe(
        'token.example resolves to 127.0.0.1, not a public address (loopback)',
      );
      expect(issuer.received.length).toBe(before);
      // Where the guard is off (tests, trusted origins), the library's own agent is used.
      expect(outbound.nodeAgent(`${issuer.url}/token`)).toBeUndefined();
    } finally {
      await guarded.close();
    }
  });
});
