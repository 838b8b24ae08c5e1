import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../../core/http/log.js';

describe('redactUrl', () => {
  it('keeps allowlisted query values and redacts every other one', () => {
    expect(redactUrl('/mcp/?user_id=u1&org_id=o1&api_key=secret&code=abc')).toBe(
      '/mcp/?user_id=u1&org_id=o1&api_key=[redacted]&code=[redacted]',
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
