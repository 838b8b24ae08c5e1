import { afterEach, describe, expect, it, vi } from 'vitest';
import { OutboundNetworkError } from '../../../core/upstream/outbound.js';
import { outboundErrorResult, responseResult, type ResultTool } from '../../../core/tools/result.js';
import {
  OutboundBlockedError,
  type OutboundResponse,
  OutboundTimeoutError,
} from '../../../core/upstream/outbound.js';

const tool: ResultTool = { provider: 'github', inputSchema: { type: 'object', properties: { owner: {} } } };
const paged: ResultTool = {
  provider: 'github',
  inputSchema: { type: 'object', properties: { owner: {}, per_page: {}, page: {} } },
};
const typed: ResultTool = { ...tool, outputSchema: { type: 'object' } };

function response(status: number, body: string | Buffer | object, headers: OutboundResponse['headers'] = {}) {
  const json = typeof body === 'object' && !Buffer.isBuffer(body);
  return {
    status,
    headers: json ? { 'content-type': 'application/json; charset=utf-8', ...headers } : headers,
    body: json ? Buffer.from(JSON.stringify(body)) : Buffer.from(body),
    truncated: false,
    url: 'https://api.github.com/x',
  };
}

function textOf(result: ReturnType<typeof responseResult>): string {
  const [first] = result.content;
  if (first?.type !== 'text') throw new Error('expected a text block');
  return first.text;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('successful responses', () => {
  it('shows JSON compact, however the provider spaced it', () => {
    const result = responseResult(
      tool,
      response(
        200,
        Buffer.from('{\n  "id": 1,\n  "labels": [ "a", "b" ],\n  "user": {"login": "octo"}\n}\n'),
        {
          'content-type': 'application/json',
        },
      ),
    );
    expect(textOf(result)).toBe('{"id":1,"labels":["a","b"],"user":{"login":"octo"}}');
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toBeUndefined();
  });

  it('escapes in the text exactly what JSON escapes, keys and values alike', () => {
    const body = Buffer.from(
      '{"say \\"hi\\"":"line\\none\\ttab","path":"C:\\\\x","emoji":"\\ud83d\\ude00","lone":"\\ud800",' +
        '"nul":"\\u0000","plain":"caf\u00e9 \u2028 100%","n":[1e21,-0,0.5,true,null]}',
    );
    const text = textOf(responseResult(tool, response(200, body, { 'content-type': 'application/json' })));
    expect(text).toBe(
      '{"say \\"hi\\"":"line\\none\\ttab","path":"C:\\\\x","emoji":"\ud83d\ude00","lone":"\\ud800",' +
        '"nul":"\\u0000","plain":"caf\u00e9 \u2028 100%","n":[1e21,-0,0.5,true,null]}',
    );
    expect(JSON.stringify(JSON.parse(text))).toBe(JSON.stringify(JSON.parse(body.toString())));
  });

  it('shows numbers as the provider wrote them and keys in its order', () => {
    // A 19-digit id read into a JavaScript number would show as 1234567890123456800.
    const body = Buffer.from('{"name": "x", "2": "b", "1": "a", "id": 1234567890123456789, "price": 1.50}');
    const text = textOf(responseResult(tool, response(200, body, { 'content-type': 'application/json' })));
    expect(text).toBe('{"name":"x","2":"b","1":"a","id":1234567890123456789,"price":1.50}');
  });

  it('shows a body that is not JSON after all as it came', () => {
    // Each would read differently were it compacted.
    const bodies = [
      '{"a": 1,}',
      '{"a": "tab\there"}',
      '[01, 2]',
      `${'[ '.repeat(600)}1, 2${' ]'.repeat(600)}`,
    ];
    for (const body of bodies) {
      const result = responseResult(typed, response(200, body, { 'content-type': 'application/json' }));
      expect(textOf(result)).toBe(body);
      expect(result.structuredContent).toBeUndefined();
    }
  });

  it('adds structuredContent for an object when the tool has an outputSchema', () => {
    expect(responseResult(typed, response(200, { id: 1 })).structuredContent).toEqual({ id: 1 });
    expect(responseResult(typed, response(200, [{ id: 1 }])).structuredContent).toBeUndefined();
  });

  it('reads vendor JSON types and untyped JSON-looking bodies', () => {
    const vendor = response(200, Buffer.from('{"a": 1}'), { 'content-type': 'application/vnd.github+json' });
    expect(textOf(responseResult(tool, vendor))).toBe('{"a":1}');
    expect(textOf(responseResult(tool, response(200, Buffer.from('[1, 2]'))))).toBe('[1,2]');
  });

  it('shows non-JSON text as it is', () => {
    const csv = response(200, 'a,b\n1,2\n', { 'content-type': 'text/csv' });
    expect(textOf(responseResult(tool, csv))).toBe('a,b\n1,2\n');
  });

  it('answers an empty success briefly', () => {
    expect(responseResult(tool, response(204, ''))).toEqual({
      content: [{ type: 'text', text: 'Done (HTTP 204).' }],
    });
    expect(textOf(responseResult(tool, response(202, '')))).toBe('Done (HTTP 202).');
  });

  it('describes binary bodies instead of showing them', () => {
    const png = response(200, Buffer.from([0x89, 0x50, 0x4e, 0x47]), { 'content-type': 'image/png' });
    expect(textOf(responseResult(tool, png))).toBe(
      'github returned 4 bytes of image/png, which is not shown as text.',
    );
  });

  it('decodes a declared charset', () => {
    const latin1 = response(200, Buffer.from([0x63, 0x61, 0x66, 0xe9]), {
      'content-type': 'text/plain; charset=ISO-8859-1',
    });
    expect(textOf(responseResult(tool, latin1))).toBe('café');
  });

  it('reads each answer by its own type, however often a type was seen before', () => {
    const bytes = Buffer.from([0x63, 0x61, 0x66, 0xc3, 0xa9]);
    const as = (contentType: string) =>
      textOf(responseResult(tool, response(200, bytes, { 'content-type': contentType })));
    for (let round = 0; round < 3; round++) {
      expect(as('text/plain; charset=ISO-8859-1')).toBe('cafÃ©');
      expect(as('text/plain; charset=utf-8')).toBe('café');
      expect(as('text/plain; charset=no-such-charset')).toBe('café');
      expect(as('text/plain')).toBe('café');
    }
    const problem = response(200, '{"a":1}', { 'content-type': 'application/problem+json' });
    const vendor = response(200, '{"a":1}', { 'content-type': 'application/vnd.api+json; charset=utf-8' });
    const plain = response(200, '{"a":1}', { 'content-type': 'text/plain' });
    for (let round = 0; round < 2; round++) {
      expect(responseResult(typed, problem).structuredContent).toEqual({ a: 1 });
      expect(responseResult(typed, vendor).structuredContent).toEqual({ a: 1 });
      expect(responseResult(typed, plain).structuredContent).toBeUndefined();
    }
  });
});

describe('output budget', () => {
  const big = response(200, 'x'.repeat(1_000), { 'content-type': 'text/plain' });

  it('cuts the text and says how much, naming the paging arguments', () => {
    const text = textOf(responseResult(paged, big, { outputBudget: 100 }));
    expect(
      text.startsWith(`${'x'.repeat(100)}\n\n[Output truncated: 900 bytes of 1,000 bytes were cut`),
    ).toBe(true);
    expect(text).toContain('100 bytes output budget');
    expect(text).toContain("this tool's `page`, `per_page` arguments");
  });

  it('suggests narrowing when the tool has no paging arguments', () => {
    expect(textOf(responseResult(tool, big, { outputBudget: 100 }))).toContain('Narrow the request');
  });

  it('defaults to 50,000 bytes', () => {
    const huge = response(200, 'y'.repeat(60_000), { 'content-type': 'text/plain' });
    expect(textOf(responseResult(tool, huge))).toContain('10,000 bytes of 60,000 bytes were cut');
    expect(textOf(responseResult(tool, big))).toBe('x'.repeat(1_000));
  });

  it('never splits a multi-byte character', () => {
    const euros = response(200, '€'.repeat(10), { 'content-type': 'text/plain' });
    const text = textOf(responseResult(tool, euros, { outputBudget: 10 }));
    expect(text.startsWith('€€€\n\n')).toBe(true);
    expect(text).toContain('21 bytes of 30 bytes were cut');
  });

  it('keeps a large JSON body in its compact form, still structured', () => {
    const items = Array.from({ length: 200 }, (_, i) => ({ id: i }));
    const result = responseResult(typed, response(200, { items }), { outputBudget: 100 });
    expect(textOf(result).startsWith('{"items":[{"id":0},{"id":1}')).toBe(true);
    expect(result.structuredContent).toEqual({ items });
  });

  it('notes a body the outbound client already cut', () => {
    const cut = { ...response(200, '{"a": [1, 2', { 'content-type': 'application/json' }), truncated: true };
    const result = responseResult(typed, cut);
    expect(textOf(result)).toBe(
      '{"a": [1, 2\n\nThe response was longer than the gateway accepts and only its first 11 bytes arrived.',
    );
    expect(result.structuredContent).toBeUndefined();
  });
});

describe('provider errors', () => {
  it.each([
    [{ message: 'Not Found', documentation_url: 'https://docs' }, 'Not Found'],
    [{ error: 'channel_not_found' }, 'channel_not_found'],
    [{ error: { code: 404, message: 'Requested entity was not found.' } }, 'Requested entity was not found.'],
    [
      { errors: [{ message: 'Title is missing' }, { message: 'Body too long' }] },
      'Title is missing; Body too long',
    ],
    [{ error_description: 'The token expired' }, 'The token expired'],
    [{ error: 'invalid_grant', error_description: 'Bad code' }, 'invalid_grant: Bad code'],
    [{ type: 'about:blank', title: 'Gone', detail: 'The list was deleted' }, 'The list was deleted'],
    [
      { message: 'Validation Failed', errors: [{ message: 'name is taken' }] },
      'Validation Failed (name is taken)',
    ],
    [{ errors: ['first', 'second'] }, 'first; second'],
    // Postmark's PascalCase, YNAB's error detail, Linode's error reasons.
    [{ ErrorCode: 300, Message: 'Invalid email request' }, 'Invalid email request'],
    [
      { error: { id: '404.2', name: 'resource_not_found', detail: 'Resource not found' } },
      'Resource not found',
    ],
    [{ errors: [{ reason: 'Not found' }] }, 'Not found'],
  ])('extracts the provider message from %j', (body, message) => {
    expect(textOf(responseResult(tool, response(404, body)))).toContain(
      `github returned HTTP 404 Not Found: ${message}\n`,
    );
  });

  it('uses a plain-text body, whitespace collapsed and clipped', () => {
    const result = responseResult(
      tool,
      response(400, `  bad\n\n  input ${'z'.repeat(400)}`, { 'content-type': 'text/plain' }),
    );
    const first = textOf(result).split('\n')[0] ?? '';
    expect(first.startsWith('github returned HTTP 400 Bad Request: bad input zzz')).toBe(true);
    expect(first.endsWith('…')).toBe(true);
    expect(first.length).toBeLessThan(400);
    expect(result.isError).toBe(true);
  });

  it('takes only the title of an HTML error page', () => {
    const html = '<html><head><title>502 Bad Gateway</title></head><body><script>x</script></body></html>';
    expect(textOf(responseResult(tool, response(502, html, { 'content-type': 'text/html' })))).toMatch(
      /^github returned HTTP 502 Bad Gateway: 502 Bad Gateway\nThis is a failure on github's side: wait before retrying\.$/,
    );
  });

  it('still reports the status of an empty error body', () => {
    expect(textOf(responseResult(tool, response(500, '')))).toBe(
      "github returned HTTP 500 Internal Server Error.\nThis is a failure on github's side: wait before retrying.",
    );
  });

  it('401 says the credential was refused and how to reconnect', () => {
    const text = textOf(responseResult(tool, response(401, { message: 'Bad credentials' })));
    expect(text).toContain('github returned HTTP 401 Unauthorized: Bad credentials');
    expect(text).toContain('credential of this github connection was refused');
    expect(text).toContain('connect_provider (provider "github")');
  });

  it('403 mentions permissions and reconnecting', () => {
    const text = textOf(
      responseResult(tool, response(403, { message: 'Resource not accessible by integration' })),
    );
    expect(text).toContain('may lack a permission or scope');
    expect(text).toContain('connect_provider');
  });

  it('429 with Retry-After in seconds', () => {
    const text = textOf(
      responseResult(tool, response(429, { message: 'Slow down' }, { 'retry-after': '30' })),
    );
    expect(text).toBe(
      'github returned HTTP 429 Too Many Requests: Slow down\ngithub is rate limiting these calls: retry after 30 seconds.',
    );
  });

  it('429 with Retry-After as an HTTP-date', () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const headers = { 'retry-after': 'Thu, 01 Jan 2026 00:01:30 GMT' };
    expect(textOf(responseResult(tool, response(429, '', headers)))).toContain('retry after 90 seconds');
  });

  it('429 without Retry-After', () => {
    expect(textOf(responseResult(tool, response(429, '')))).toContain(
      'rate limiting these calls: wait before retrying',
    );
  });

  it('a 403 with the rate limit exhausted is a rate limit, not a refused credential', () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const reset = String(Date.parse('2026-01-01T00:00:01Z') / 1000);
    const headers = { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset };
    const text = textOf(responseResult(tool, response(403, { message: 'API rate limit exceeded' }, headers)));
    expect(text).toContain('retry after 1 second.');
    expect(text).not.toContain('connect_provider');
  });

  it('503 carries Retry-After too', () => {
    expect(textOf(responseResult(tool, response(503, '', { 'retry-after': '5' })))).toContain(
      "failure on github's side: retry after 5 seconds",
    );
  });

  it('never repeats the credential, even when the provider echoes it', () => {
    const secret = 'ghp_supersecretvalue123';
    const failed = responseResult(tool, response(401, { message: `Token ${secret} is invalid` }), {
      secrets: [secret],
    });
    expect(textOf(failed)).toContain('Token [redacted] is invalid');
    const echoed = responseResult(tool, response(200, { echo: secret }), { secrets: [secret, ''] });
    expect(textOf(echoed)).toBe('{"echo":"[redacted]"}');
  });
});

describe('outbound failures', () => {
  it('a refused address says why and who can allow it', () => {
    const error = new OutboundBlockedError(
      'localhost',
      'private_address',
      'localhost resolves to 127.0.0.1, not a public address (loopback)',
    );
    const result = outboundErrorResult(tool, error);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'Refused to call github: localhost resolves to 127.0.0.1, not a public address (loopback). ' +
        'The gateway only calls public internet addresses; an operator can allow a private network with TOOLGATE_ALLOW_PRIVATE_NETWORK=1.',
    );
  });

  it('a refused scheme points at the connection settings', () => {
    const error = new OutboundBlockedError(
      'x',
      'unsupported_scheme',
      'ftp URLs are not called; only http and https',
    );
    expect(textOf(outboundErrorResult(tool, error))).toContain('Check the connection settings');
  });

  it('a timeout warns that the request may have taken effect', () => {
    const text = textOf(outboundErrorResult(tool, new OutboundTimeoutError('api.github.com', 15_000)));
    expect(text).toBe(
      'github did not answer within 15 seconds. It may still have carried out the request: check before repeating a change, or try again later.',
    );
  });

  it('a network failure names the cause', () => {
    const text = textOf(
      outboundErrorResult(tool, new OutboundNetworkError('api.github.com', 'ECONNREFUSED')),
    );
    expect(text).toBe(
      'Calling github failed: could not reach api.github.com: the connection was refused. The provider may be down or unreachable; try again later.',
    );
  });
});

describe("Jira's error shapes", () => {
  it('reads errorMessages and the per-field errors object', () => {
    const tool = { provider: 'jira', inputSchema: { type: 'object' } };
    const response = (body: unknown) => ({
      status: 400,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify(body)),
      truncated: false,
      url: 'https://api.atlassian.com/x',
    });
    const listed = responseResult(
      tool,
      response({
        errorMessages: ['Issue does not exist or you do not have permission to see it.'],
        errors: {},
      }),
    );
    expect(listed.content[0]).toMatchObject({
      text: expect.stringContaining('Issue does not exist') as unknown,
    });
    const fields = responseResult(
      tool,
      response({ errorMessages: [], errors: { summary: 'You must specify a summary of the issue.' } }),
    );
    expect(fields.content[0]).toMatchObject({
      text: expect.stringContaining('summary: You must specify a summary') as unknown,
    });
  });
});

describe('GitHub and Google error details', () => {
  const tool = { provider: 'acme', inputSchema: { type: 'object' } };
  const response = (status: number, body: unknown) => ({
    status,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(body)),
    truncated: false,
    url: 'https://api.example.com/x',
  });

  it("names GitHub's validation errors by field and code", () => {
    const result = responseResult(
      tool,
      response(422, {
        message: 'Validation Failed',
        errors: [{ resource: 'Issue', field: 'title', code: 'missing_field' }],
      }),
    );
    expect(result.content[0]).toMatchObject({
      text: expect.stringContaining('Validation Failed (title: missing_field)') as unknown,
    });
  });

  it("reads Google's 403 rateLimitExceeded as rate limiting, not a permission problem", () => {
    const body = {
      error: {
        code: 403,
        message: 'Rate Limit Exceeded',
        errors: [{ reason: 'rateLimitExceeded', message: 'Rate Limit Exceeded' }],
      },
    };
    const text = (responseResult(tool, response(403, body)).content[0] as { text: string }).text;
    expect(text).toContain('rate limiting');
    expect(text).not.toContain('lack a permission');
  });
});
