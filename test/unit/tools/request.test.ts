import { describe, expect, it } from 'vitest';
import type { ParameterBinding, RequestPlan } from '../../../core/catalog/types.js';
import { buildRequest, joinUrl, parsedJoin, type UpstreamRequest } from '../../../core/upstream/request.js';

const BASE = 'https://api.example.com';

function plan(parameters: ParameterBinding[], extra: Partial<RequestPlan> = {}): RequestPlan {
  return { method: 'GET', path: '/items', parameters, ...extra };
}

function query(name: string, style?: ParameterBinding['style'], explode?: boolean): ParameterBinding {
  return {
    arg: name,
    name,
    in: 'query',
    required: false,
    ...(style && { style }),
    ...(explode !== undefined && { explode }),
  };
}

function build(p: RequestPlan, args: Record<string, unknown>, base = BASE): UpstreamRequest {
  const built = buildRequest(p, args, base);
  if (!built.ok) throw new Error(built.message);
  return built.request;
}

describe('base URL joining', () => {
  it('joins as text exactly as the URL parser would', () => {
    const bases = [
      'https://api.example.com',
      'https://api.example.com/',
      'https://api.example.com/v2//',
      'http://user:pw@127.0.0.1:8080/base?token=a%20b&x',
      'https://api.example.com/v1?',
      'https://api.example.com/a b?c d#frag',
      'https://[::1]:9/x#y',
      'ftp://files.example.com/pub',
    ];
    const paths = [
      '',
      '/',
      'items',
      '/items/42',
      '/a%2Fb/c',
      "/it's/@me:1",
      '/a b',
      '/x?y',
      '/x#y',
      '/./a',
      '/a/..',
      '/%2e%2E/x',
      '/.well-known/x',
      '/a\\b',
      '/é',
      '/a{b}',
      '/a|b',
      '/a^b',
      '/a`b',
    ];
    const queries = [
      [],
      [''],
      ['a=1'],
      ['a=1', '', 'b=%20'],
      ['f[a][0]=x'],
      ["q='x'"],
      ['?a=1'],
      ['a=b c'],
      ['a=é'],
      ['x=1#2'],
      ['a=<b>'],
    ];
    for (const base of bases)
      for (const path of paths)
        for (const query of queries)
          expect(joinUrl(base, path, query), JSON.stringify([base, path, query])).toBe(
            parsedJoin(base, path, query),
          );
  });

  it.each([
    ['https://api.example.com', '/users', 'https://api.example.com/users'],
    ['https://api.example.com/', '/users', 'https://api.example.com/users'],
    ['https://api.example.com/v2', '/users', 'https://api.example.com/v2/users'],
    ['https://api.example.com/v2/', '/users', 'https://api.example.com/v2/users'],
    ['https://api.example.com/v2', 'users', 'https://api.example.com/v2/users'],
    ['http://127.0.0.1:8080/api', '/users', 'http://127.0.0.1:8080/api/users'],
  ])('%s + %s', (base, path, url) => {
    expect(build(plan([], { path }), {}, base).url).toBe(url);
  });

  it('keeps a webhook URL, query included, when the path is empty', () => {
    const url = 'https://chat.example.com/v1/spaces/AAA/messages?key=k1&token=t%3D1';
    expect(build(plan([], { path: '' }), {}, url).url).toBe(url);
    expect(build(plan([query('thread')], { path: '' }), { thread: 'x y' }, url).url).toBe(
      `${url}&thread=x%20y`,
    );
  });

  it('keeps a trailing slash of a webhook URL when the path is empty', () => {
    expect(build(plan([], { path: '' }), {}, 'https://hooks.example.com/T/B/').url).toBe(
      'https://hooks.example.com/T/B/',
    );
  });

  it('drops a fragment of the base URL', () => {
    expect(build(plan([]), {}, 'https://api.example.com/v1#top').url).toBe(
      'https://api.example.com/v1/items',
    );
  });
});

describe('path parameters', () => {
  const repo = plan(
    [
      { arg: 'owner', name: 'owner', in: 'path', required: true },
      { arg: 'repo_name', name: 'repo', in: 'path', required: true },
    ],
    { path: '/repos/{owner}/{repo}/issues' },
  );

  it('substitutes each variable by its argument', () => {
    expect(build(repo, { owner: 'octo', repo_name: 'hello' }).url).toBe(`${BASE}/repos/octo/hello/issues`);
  });

  it('percent-encodes every reserved character, `/` included (RFC 3986)', () => {
    const { url } = build(repo, { owner: 'a b/c?d#e%f&g', repo_name: "!'()*é" });
    expect(url).toBe(`${BASE}/repos/a%20b%2Fc%3Fd%23e%25f%26g/%21%27%28%29%2A%C3%A9/issues`);
  });

  it('keeps unreserved characters as they are and percent-encodes every other ASCII character and every byte of the rest', () => {
    const unreserved = /^[A-Za-z0-9\-._~]$/;
    const characters = [
      ...Array.from({ length: 0x80 }, (_, c) => String.fromCharCode(c)),
      'é',
      '\u2028',
      '😀',
    ];
    for (const character of characters) {
      // Between unreserved characters, so that the value is no dot segment and none is empty.
      const { url } = build(repo, { owner: `a${character}z`, repo_name: 'r' });
      const expected = unreserved.test(character)
        ? character
        : [...Buffer.from(character)]
            .map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)
            .join('');
      expect(url, JSON.stringify(character)).toBe(`${BASE}/repos/a${expected}z/r/issues`);
    }
  });

  it('stringifies numbers and booleans', () => {
    const p = plan([{ arg: 'id', name: 'id', in: 'path', required: true }], { path: '/items/{id}' });
    expect(build(p, { id: 42 }).url).toBe(`${BASE}/items/42`);
    expect(build(p, { id: false }).url).toBe(`${BASE}/items/false`);
  });

  it('joins arrays and objects in simple style', () => {
    const p = plan([{ arg: 'ids', name: 'ids', in: 'path', required: true }], { path: '/items/{ids}' });
    expect(build(p, { ids: ['a,1', 'b'] }).url).toBe(`${BASE}/items/a%2C1,b`);
    expect(build(p, { ids: { x: 1, y: 2 } }).url).toBe(`${BASE}/items/x,1,y,2`);
  });

  it.each(['..', '.', ''])('refuses %j as a path segment (it would reach another endpoint)', (owner) => {
    expect(buildRequest(repo, { owner, repo_name: 'r' }, BASE)).toEqual({
      ok: false,
      field: 'owner',
      message: 'argument `owner` must not be empty, `.` or `..`',
    });
  });

  it('names the argument of a missing path value', () => {
    expect(buildRequest(repo, { owner: 'octo' }, BASE)).toEqual({
      ok: false,
      field: 'repo_name',
      message: 'argument `repo_name` is required',
    });
  });
});

describe('query serialization by style and explode', () => {
  it('form, explode (the default): arrays repeat the key', () => {
    expect(build(plan([query('tag')]), { tag: ['a', 'b c'] }).url).toBe(`${BASE}/items?tag=a&tag=b%20c`);
  });

  it('form, not exploded: arrays are comma-joined, commas inside values encoded', () => {
    expect(build(plan([query('tag', 'form', false)]), { tag: ['a,1', 'b'] }).url).toBe(
      `${BASE}/items?tag=a%2C1,b`,
    );
  });

  it('spaceDelimited and pipeDelimited', () => {
    expect(build(plan([query('tag', 'spaceDelimited')]), { tag: ['a', 'b'] }).url).toBe(
      `${BASE}/items?tag=a%20b`,
    );
    expect(build(plan([query('tag', 'pipeDelimited')]), { tag: ['a|1', 'b'] }).url).toBe(
      `${BASE}/items?tag=a%7C1%7Cb`,
    );
  });

  it('deepObject: `a[b]=c`, nested objects and arrays by index', () => {
    const { url } = build(plan([query('filter', 'deepObject', true)]), {
      filter: { state: 'open', labels: ['bug', 'ui'], range: { from: 1 }, skip: null },
    });
    expect(url).toBe(
      `${BASE}/items?filter[state]=open&filter[labels][0]=bug&filter[labels][1]=ui&filter[range][from]=1`,
    );
  });

  it('form objects: exploded spreads the keys, not exploded pairs them under the name', () => {
    const value = { state: 'open', sort: 'created at' };
    expect(build(plan([query('filter')]), { filter: value }).url).toBe(
      `${BASE}/items?state=open&sort=created%20at`,
    );
    expect(build(plan([query('filter', 'form', false)]), { filter: value }).url).toBe(
      `${BASE}/items?filter=state,open,sort,created%20at`,
    );
  });

  it('scalars, encoding of names and values, and order of the plan', () => {
    const p = plan([query('q'), query('per page'), query('draft')]);
    expect(build(p, { draft: true, q: 'a&b=c+d', 'per page': 30 }).url).toBe(
      `${BASE}/items?q=a%26b%3Dc%2Bd&per%20page=30&draft=true`,
    );
  });

  it('leaves out undefined, null and empty arrays', () => {
    const p = plan([query('a'), query('b'), query('c'), query('d', 'form', false)]);
    expect(build(p, { a: undefined, b: null, c: [], d: [] }).url).toBe(`${BASE}/items`);
  });

  it('uses the wire name, not the argument name', () => {
    const p = plan([{ arg: 'page_size', name: 'pageSize', in: 'query', required: false }]);
    expect(build(p, { page_size: 10 }).url).toBe(`${BASE}/items?pageSize=10`);
  });
});

describe('headers', () => {
  const header = (name: string, explode?: boolean): ParameterBinding => ({
    arg: name,
    name,
    in: 'header',
    required: false,
    ...(explode !== undefined && { explode }),
  });

  it('stringifies values under lower-case names, with a JSON accept by default', () => {
    const p = plan([header('X-Request-Id'), header('X-Tags'), header('X-Meta'), header('X-Flag')]);
    const { headers } = build(p, {
      'X-Request-Id': 7,
      'X-Tags': ['a', 'b'],
      'X-Meta': { k: 'v' },
      'X-Flag': true,
    });
    expect(headers).toEqual({
      accept: 'application/json, */*;q=0.8',
      'x-request-id': '7',
      'x-tags': 'a,b',
      'x-meta': 'k,v',
      'x-flag': 'true',
    });
  });

  it('exploded objects use `k=v`', () => {
    expect(build(plan([header('X-Meta', true)]), { 'X-Meta': { k: 'v', n: 1 } }).headers['x-meta']).toBe(
      'k=v,n=1',
    );
  });

  it('an Accept parameter replaces the default', () => {
    expect(build(plan([header('Accept')]), { Accept: 'text/csv' }).headers.accept).toBe('text/csv');
  });

  it('refuses line breaks (header injection)', () => {
    expect(buildRequest(plan([header('X-Note')]), { 'X-Note': 'a\r\nX-Evil: 1' }, BASE)).toMatchObject({
      ok: false,
      field: 'X-Note',
    });
  });
});

describe('bodies', () => {
  const post = (body: NonNullable<RequestPlan['body']>): RequestPlan => ({
    method: 'POST',
    path: '/items',
    parameters: [],
    body,
  });

  it('JSON from one property argument', () => {
    const p = post({
      contentType: 'application/json',
      required: true,
      from: { kind: 'property', arg: 'body' },
    });
    const request = build(p, { body: { title: 'x', tags: ['a'], clear: null } });
    expect(request.body).toBe('{"title":"x","tags":["a"],"clear":null}');
    expect(request.headers['content-type']).toBe('application/json');
  });

  it('JSON spread from the listed top-level arguments, undefined ones left out', () => {
    const p = post({
      contentType: 'application/json',
      required: false,
      from: { kind: 'spread', args: ['title', 'body'] },
    });
    expect(build({ ...p, parameters: [query('q')] }, { title: 't', body: undefined, q: 'x' }).body).toBe(
      '{"title":"t"}',
    );
  });

  it('no body, and no content type, when nothing optional was given', () => {
    const p = post({
      contentType: 'application/json',
      required: false,
      from: { kind: 'spread', args: ['title'] },
    });
    const request = build(p, {});
    expect(request.body).toBeUndefined();
    expect(request.headers['content-type']).toBeUndefined();
  });

  it('an empty object when the body is required and only optional fields exist', () => {
    const p = post({
      contentType: 'application/json',
      required: true,
      from: { kind: 'spread', args: ['title'] },
    });
    expect(build(p, {}).body).toBe('{}');
  });

  it('a required property body that is missing is named', () => {
    const p = post({
      contentType: 'application/json',
      required: true,
      from: { kind: 'property', arg: 'payload' },
    });
    expect(buildRequest(p, {}, BASE)).toMatchObject({ ok: false, field: 'payload' });
  });

  it('form bodies: scalars, repeated keys for arrays, brackets for nesting', () => {
    const p = post({
      contentType: 'application/x-www-form-urlencoded',
      required: true,
      from: { kind: 'spread', args: ['To', 'Event', 'metadata', 'items'] },
    });
    const request = build(p, {
      To: '+1 555',
      Event: ['ringing', 'answered'],
      metadata: { order: 'a&b' },
      items: [{ price: 'p_1', quantity: 2 }],
    });
    expect(request.body).toBe(
      'To=%2B1%20555&Event=ringing&Event=answered&metadata[order]=a%26b&items[0][price]=p_1&items[0][quantity]=2',
    );
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
  });
});
