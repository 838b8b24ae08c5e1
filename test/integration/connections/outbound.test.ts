/**
 * The outbound client against real loopback servers. Every socket opened here goes to 127.0.0.1;
 * names and non-loopback addresses only ever reach the guard, which refuses them before connecting.
 */
import { getEventListeners, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupFunction } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OutboundNetworkError } from '../../../core/upstream/outbound.js';
import {
  OutboundBlockedError,
  type OutboundClient,
  OutboundTimeoutError,
} from '../../../core/upstream/outbound.js';
import { useOutboundClients } from '../../helpers/outbound.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

interface TestServer {
  server: Server;
  origin: string;
  port: number;
  received: Received[];
  connections: number;
}

const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    }),
  );
});
// Registered after the servers' afterEach, so it runs first: the clients close before the servers.
const client = useOutboundClients({
  allowPrivateNetwork: true,
  timeoutMs: 5_000,
  maxResponseBytes: 1_000_000,
  maxRedirects: 3,
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<TestServer> {
  const server = createServer();
  const state: TestServer = { server, origin: '', port: 0, received: [], connections: 0 };
  server.on('connection', () => state.connections++);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      state.received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      handler(req, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  state.port = (server.address() as AddressInfo).port;
  state.origin = `http://127.0.0.1:${state.port}`;
  return state;
}

function redirect(status: number, location: string) {
  return (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(status, { location });
    res.end();
  };
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );
}

/** Maps every name to 127.0.0.1, so that no test depends on, or reaches, a real resolver. */
const loopbackLookup: LookupFunction = (_hostname, options, callback) => {
  if (options.all === true) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
};

describe('with private networks allowed (TOOLGATE_ALLOW_PRIVATE_NETWORK=1)', () => {
  it('sends the request and returns status, headers and body', async () => {
    const target = await serve((_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-multi': ['a', 'b'] });
      res.end('{"ok":true}');
    });
    const response = await client().send({
      method: 'POST',
      url: `${target.origin}/v1/items?q=1`,
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer t' },
      body: '{"name":"x"}',
    });
    expect(response).toMatchObject({ status: 201, truncated: false, url: `${target.origin}/v1/items?q=1` });
    expect(response.headers['content-type']).toBe('application/json');
    expect(response.headers['x-multi']).toEqual(['a', 'b']);
    expect(response.body.toString()).toBe('{"ok":true}');
    expect(target.received).toEqual([
      expect.objectContaining({ method: 'POST', url: '/v1/items?q=1', body: '{"name":"x"}' }),
    ]);
    expect(target.received[0]?.headers).toMatchObject({
      'content-type': 'application/json',
      authorization: 'Bearer t',
      'user-agent': 'toolgate',
    });
  });

  it("sends the request's own User-Agent instead of ours, and a header named twice in two cases once", async () => {
    const target = await serve((_req, res) => res.end('ok'));
    await client().send({
      method: 'GET',
      url: `${target.origin}/`,
      headers: { 'User-Agent': 'their-agent/2', 'X-Key': 'first', 'x-key': 'second' },
    });
    // Node keeps the first of two User-Agents, and joins two X-Keys with a comma.
    expect(target.received[0]?.headers).toMatchObject({ 'user-agent': 'their-agent/2', 'x-key': 'second' });
  });

  it('keeps the connection alive between calls', async () => {
    const target = await serve((_req, res) => res.end('ok'));
    const c = client();
    for (let i = 0; i < 5; i++) await c.send({ method: 'GET', url: `${target.origin}/`, headers: {} });
    expect(target.received).toHaveLength(5);
    // undici frees a connection a tick after its body ends, so back-to-back calls may use two.
    expect(target.connections).toBeLessThanOrEqual(2);
  });

  it('reaches a name that resolves to loopback', async () => {
    const target = await serve((_req, res) => res.end('named'));
    const response = await client({ lookup: loopbackLookup }).send({
      method: 'GET',
      url: `http://service.test:${target.port}/`,
      headers: {},
    });
    expect(response.body.toString()).toBe('named');
    expect(target.received[0]?.headers.host).toBe(`service.test:${target.port}`);
  });

  it.each([
    ['caps the body and says it was cut', 1_000_000, true],
    ['a body exactly at the cap is whole', 1_000, false],
  ] as const)('%s', async (_name, size, truncated) => {
    const target = await serve((_req, res) => res.end(Buffer.alloc(size, 'a')));
    const response = await client({ maxResponseBytes: 1_000 }).send({
      method: 'GET',
      url: target.origin,
      headers: {},
    });
    expect(response.body.length).toBe(1_000);
    expect(response.truncated).toBe(truncated);
  });

  it('times out a server that never answers', async () => {
    const target = await serve(() => undefined);
    const sent = failure(
      client({ timeoutMs: 60_000 }).send({ method: 'GET', url: target.origin, headers: {}, timeoutMs: 200 }),
    );
    await once(target.server, 'request');
    const error = await sent;
    expect(error).toBeInstanceOf(OutboundTimeoutError);
    expect(error).toMatchObject({ host: '127.0.0.1', timeoutMs: 200 });
  });

  it('times out a body still arriving at the deadline, however steadily it trickles', async () => {
    // A byte every 20 ms never leaves the connection idle for the deadline's length.
    const target = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('a'), 20);
      res.on('close', () => clearInterval(timer));
    });
    const error = await failure(
      client().send({ method: 'GET', url: target.origin, headers: {}, timeoutMs: 300 }),
    );
    expect(error).toBeInstanceOf(OutboundTimeoutError);
    expect(error).toMatchObject({ host: '127.0.0.1', timeoutMs: 300 });
  });

  it("stops when the caller's signal aborts, with the caller's reason", async () => {
    const target = await serve(() => undefined);
    const controller = new AbortController();
    const sent = failure(
      client().send({ method: 'GET', url: target.origin, headers: {}, signal: controller.signal }),
    );
    await once(target.server, 'request');
    const reason = new Error('tools/call cancelled');
    controller.abort(reason);
    expect(await sent).toBe(reason);
  });

  // The calls' deadline is past this test's: only the abort can end them in time.
  it(
    'stops every call in flight under a signal they share, however many calls it served before',
    { timeout: 5_000 },
    async () => {
      // A client connection's signal (modern.ts) is shared by every call made over that connection.
      const answered = await serve((_req, res) => res.end('ok'));
      const controller = new AbortController();
      const { signal } = controller;
      for (let i = 0; i < 20; i++) {
        const response = await client().send({ method: 'GET', url: answered.origin, headers: {}, signal });
        expect(response.status).toBe(200);
      }
      // No listener left behind per call (Node warns past 10 on one signal).
      expect(getEventListeners(signal, 'abort').length).toBeLessThanOrEqual(1);
      const silent = await serve(() => undefined);
      const sent = [1, 2, 3].map(() =>
        failure(
          client({ timeoutMs: 60_000 }).send({ method: 'GET', url: silent.origin, headers: {}, signal }),
        ),
      );
      while (silent.received.length < 3) await once(silent.server, 'request');
      const reason = new Error('the client went away');
      controller.abort(reason);
      expect(await Promise.all(sent)).toEqual([reason, reason, reason]);
      // A call made after the abort fails at once, never waiting for the silent server.
      expect(await failure(client().send({ method: 'GET', url: silent.origin, headers: {}, signal }))).toBe(
        reason,
      );
    },
  );

  // Before, the abort waited for the connection: here undici's 10 s connect timeout, past this test's.
  it("stops at the caller's abort while the connection is still being made", { timeout: 5_000 }, async () => {
    const target = await serve((_req, res) => res.end('should not be reached'));
    let answer!: (error: Error) => void;
    let stalled!: LookupFunction;
    const resolving = new Promise<void>((resolve) => {
      // A resolver that answers only when told: the request waits for its connection until then.
      stalled = (_hostname, _options, callback) => {
        answer = (error) => callback(error, '');
        resolve();
      };
    });
    const controller = new AbortController();
    const sent = failure(
      client({ lookup: stalled }).send({
        method: 'GET',
        url: `http://service.test:${target.port}/`,
        headers: {},
        signal: controller.signal,
      }),
    );
    await resolving;
    const reason = new Error('tools/call cancelled');
    controller.abort(reason);
    expect(await sent).toBe(reason);
    answer(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }));
    expect(target.received).toHaveLength(0);
  });

  it('reports a refused connection as a network error', async () => {
    const closed = await serve(() => undefined);
    const url = closed.origin;
    closed.server.close();
    await once(closed.server, 'close');
    const error = await failure(client().send({ method: 'GET', url, headers: {} }));
    expect(error).toBeInstanceOf(OutboundNetworkError);
    expect(error).toMatchObject({
      code: 'ECONNREFUSED',
      message: 'could not reach 127.0.0.1: the connection was refused',
    });
  });
});

describe('redirects', () => {
  it('follows a same-origin redirect with the credential', async () => {
    const target = await serve((req, res) =>
      req.url === '/old' ? redirect(301, '/new')(req, res) : res.end('moved'),
    );
    const response = await client().send({
      method: 'GET',
      url: `${target.origin}/old`,
      headers: { authorization: 'Bearer t' },
    });
    expect(response.body.toString()).toBe('moved');
    expect(response.url).toBe(`${target.origin}/new`);
    expect(target.received[1]?.headers.authorization).toBe('Bearer t');
  });

  it('drops credential headers when the redirect leaves the origin', async () => {
    const other = await serve((_req, res) => res.end('elsewhere'));
    const first = await serve(redirect(307, `${other.origin}/landing`));
    await client().send({
      method: 'PUT',
      url: `${first.origin}/start`,
      headers: {
        Authorization: 'Bearer t',
        'X-Api-Key': 'k',
        Cookie: 'c=1',
        Accept: 'application/json',
        'content-type': 'text/plain',
      },
      body: 'payload',
    });
    const landed = other.received[0];
    expect(landed).toMatchObject({ method: 'PUT', url: '/landing', body: 'payload' });
    expect(landed?.headers).toMatchObject({
      accept: 'application/json',
      'content-type': 'text/plain',
      'user-agent': 'toolgate',
    });
    expect(landed?.headers).not.toHaveProperty('authorization');
    expect(landed?.headers).not.toHaveProperty('x-api-key');
    expect(landed?.headers).not.toHaveProperty('cookie');
  });

  it('turns a POST into a bodiless GET on 303', async () => {
    const target = await serve((req, res) =>
      req.url === '/form' ? redirect(303, '/done')(req, res) : res.end('done'),
    );
    await client().send({
      method: 'POST',
      url: `${target.origin}/form`,
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(target.received[1]).toMatchObject({ method: 'GET', url: '/done', body: '' });
    expect(target.received[1]?.headers).not.toHaveProperty('content-type');
  });

  it("follows a redirect whose body is larger than the cap, and reads the target's body whole", async () => {
    const target = await serve((req, res) => {
      if (req.url === '/old') {
        res.writeHead(302, { location: '/new' });
        res.end(Buffer.alloc(500_000, 'r'));
      } else res.end('x'.repeat(1_000));
    });
    const response = await client({ maxResponseBytes: 1_000 }).send({
      method: 'GET',
      url: `${target.origin}/old`,
      headers: {},
    });
    expect(response).toMatchObject({ status: 200, truncated: false, url: `${target.origin}/new` });
    expect(response.body.toString()).toBe('x'.repeat(1_000));
  });

  it('gives up after maxRedirects', async () => {
    const target = await serve((req, res) => redirect(302, `/hop${target.received.length}`)(req, res));
    const error = await failure(
      client({ maxRedirects: 2 }).send({ method: 'GET', url: target.origin, headers: {} }),
    );
    expect(error).toBeInstanceOf(OutboundNetworkError);
    expect(error).toMatchObject({ code: 'TOO_MANY_REDIRECTS' });
    expect(target.received).toHaveLength(3);
  });
});

describe('with private networks refused (the production default)', () => {
  async function refused(c: OutboundClient, url: string): Promise<OutboundBlockedError> {
    const error = await failure(c.send({ method: 'GET', url, headers: {} }));
    expect(error).toBeInstanceOf(OutboundBlockedError);
    return error as OutboundBlockedError;
  }

  it('refuses loopback, private, link-local and metadata addresses, and loopback names', async () => {
    const target = await serve((_req, res) => res.end('should not be reached'));
    const c = client({ allowPrivateNetwork: false });
    await refused(c, `${target.origin}/`);
    await refused(c, `http://[::1]:${target.port}/`);
    await refused(c, `http://localhost:${target.port}/`);
    await refused(c, 'http://10.0.0.1/');
    await refused(c, 'http://169.254.169.254/latest/meta-data/iam/security-credentials/');
    expect(target.received).toEqual([]);
    expect(target.connections).toBe(0);
  });

  it('refuses a public-looking name resolving to loopback', async () => {
    const target = await serve((_req, res) => res.end('should not be reached'));
    const error = await refused(
      client({ allowPrivateNetwork: false, lookup: loopbackLookup }),
      `http://api.example.test:${target.port}/`,
    );
    expect(error.message).toBe('api.example.test resolves to 127.0.0.1, not a public address (loopback)');
    expect(target.connections).toBe(0);
  });

  describe('re-checks every redirect hop', () => {
    // The first hop is a trusted origin (a public-looking name the test resolves to loopback),
    // so the only thing under test is the check of the hop the redirect asks for.
    async function redirectFromTrusted(
      location: (victim: TestServer) => string,
    ): Promise<OutboundBlockedError> {
      const victim = await serve((_req, res) => res.end('internal secret'));
      const entry = await serve(redirect(302, location(victim)));
      const trusted = `http://public.example.test:${entry.port}`;
      const c = client({ allowPrivateNetwork: false, lookup: loopbackLookup, trustedOrigins: [trusted] });
      const error = await refused(c, `${trusted}/start`);
      expect(entry.received).toHaveLength(1);
      expect(victim.connections).toBe(0);
      return error;
    }

    it('to a loopback address', async () => {
      const error = await redirectFromTrusted((victim) => `${victim.origin}/admin`);
      expect(error).toMatchObject({ reason: 'private_address', host: '127.0.0.1' });
    });

    it('to a name resolving to loopback', async () => {
      const error = await redirectFromTrusted((victim) => `http://localhost:${victim.port}/`);
      expect(error.host).toBe('localhost');
    });

    it('to the metadata address', async () => {
      const error = await redirectFromTrusted(() => 'http://169.254.169.254/latest/meta-data/');
      expect(error.message).toBe('169.254.169.254 is not a public address (link-local)');
    });

    it('to another scheme', async () => {
      const error = await redirectFromTrusted(() => 'file:///etc/passwd');
      expect(error.reason).toBe('unsupported_scheme');
    });
  });
});
