import type { FastifyRequest } from 'fastify';
import { pino, symbols } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createApp } from '../../../core/http/app.js';
import { accessLine, redactUrl, serializers } from '../../../core/http/log.js';

describe('redactUrl', () => {
  it('keeps allowlisted query values and redacts every other one', () => {
    expect(redactUrl('/mcp/?user_id=u1&org_id=o1&tools=compact&api_key=secret&code=abc')).toBe(
      '/mcp/?user_id=u1&org_id=o1&tools=compact&api_key=[redacted]&code=[redacted]',
    );
    expect(redactUrl('/mcp/messages?sessionId=s1&token=t')).toBe(
      '/mcp/messages?sessionId=s1&token=[redacted]',
    );
    expect(redactUrl('/mcp/')).toBe('/mcp/');
  });

  it('logs loggable values as their decoded value encoded, whether the URL spelled them plainly or not', () => {
    expect(redactUrl("/mcp/?user_id=u_1.x~*'()!&org_id=o-2")).toBe("/mcp/?user_id=u_1.x~*'()!&org_id=o-2");
    expect(redactUrl('/mcp/?user_id=a+b&org_id=%6F1')).toBe('/mcp/?user_id=a%20b&org_id=o1');
    expect(redactUrl('/mcp/?user_id=%C3%A9&&tools')).toBe('/mcp/?user_id=%C3%A9&tools=');
  });

  it('redacts one-time link tokens in paths', () => {
    expect(redactUrl('/connect/abcdef123')).toBe('/connect/[redacted]');
    expect(redactUrl('/oauth/start/xyz?x=1')).toBe('/oauth/start/[redacted]?x=[redacted]');
  });
});

describe('access log', () => {
  it('writes one line per request, with the redacted URL, the status and the time taken', async () => {
    const lines: Record<string, unknown>[] = [];
    const app = createApp({
      logLevel: 'info',
      logStream: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    app.get('/hello', () => ({ ok: true }));
    await app.inject({ method: 'GET', url: '/hello?user_id=u1&token=sentinel-token' });
    await app.inject({ method: 'GET', url: '/missing' });
    await app.close();

    expect(lines.map((line) => line.msg)).toEqual(['request completed', 'request completed']);
    expect(lines[0]).toMatchObject({
      req: { method: 'GET', url: '/hello?user_id=u1&token=[redacted]' },
      res: { statusCode: 200 },
    });
    expect(typeof lines[0]!.responseTime).toBe('number');
    expect(lines[1]).toMatchObject({ req: { url: '/missing' }, res: { statusCode: 404 } });
    expect(JSON.stringify(lines)).not.toContain('sentinel-token');
  });

  it("names the request in every line of it, its own lines and the access line, and in no other request's", async () => {
    const lines: Record<string, unknown>[] = [];
    const app = createApp({
      logLevel: 'info',
      logStream: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    app.get('/work', (request) => {
      request.log.warn({ step: 1 }, 'working');
      return { ok: true };
    });
    await app.inject({ method: 'GET', url: '/work' });
    await app.inject({ method: 'GET', url: '/work' });
    await app.close();

    expect(lines.map((line) => line.msg)).toEqual([
      'working',
      'request completed',
      'working',
      'request completed',
    ]);
    const ids = lines.map((line) => line.reqId);
    expect(ids[0]).toEqual(expect.any(String));
    expect(ids[1]).toBe(ids[0]);
    expect(ids[3]).toBe(ids[2]);
    expect(ids[2]).not.toBe(ids[0]);
    expect(lines[0]).toMatchObject({ level: 40, step: 1, pid: process.pid });
  });
});

describe('accessLine', () => {
  it("writes pino's own line for the request, byte for byte", () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.UTC(2026, 10, 28, 1, 2, 3, 456) });
    try {
      const lines: string[] = [];
      const root = pino({ level: 'info', serializers }, { write: (line: string) => void lines.push(line) });
      const log = root.child({ reqId: 'req-7' });
      const bindings = (log as unknown as Record<symbol, string>)[symbols.chindingsSym]!;
      const requests = [
        { method: 'POST', url: '/mcp/?user_id=u%221&org_id=%C3%A9&api_key=k', ip: '127.0.0.1' },
        { method: 'GET', url: '/a"b\\c/\u2028\ud800?x', ip: '::1' },
        { method: 'DELETE', url: '/connect/token', ip: undefined },
      ];
      for (const [i, request] of requests.entries()) {
        for (const [status, time] of [
          [200, 1.2345],
          [404, 0],
          [500, Number.NaN],
        ] as const) {
          const fake = request as unknown as FastifyRequest;
          log.info({ req: fake, res: { statusCode: status }, responseTime: time }, 'request completed');
          expect(accessLine(bindings, fake, status, time), `request ${i}, ${status}`).toBe(lines.pop());
        }
      }
    } finally {
      vi.useRealTimers();
    }
  });
});
