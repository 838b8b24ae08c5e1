import { describe, expect, it } from 'vitest';
import { createApp } from '../../../core/http/app.js';
import { redactUrl } from '../../../core/http/log.js';

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
});
