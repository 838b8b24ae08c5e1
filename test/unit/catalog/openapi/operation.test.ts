import { describe, expect, it } from 'vitest';
import { compileAll, compileOne, documentOf } from './helpers.js';

const ok = { '200': { description: 'ok' } };

describe('compileOperation', () => {
  it('binds path, query and header parameters, merging path-level ones (operation wins)', () => {
    const doc = documentOf('3.0', {
      '/repos/{owner}/{repo}': {
        parameters: [
          {
            name: 'owner',
            in: 'path',
            required: true,
            schema: { type: 'string' },
            description: 'path-level',
          },
          { name: 'repo', in: 'path', required: true, schema: { type: 'string' } },
        ],
        get: {
          parameters: [
            {
              name: 'owner',
              in: 'path',
              required: true,
              schema: { type: 'string' },
              description: 'operation-level',
            },
            { name: 'per_page', in: 'query', schema: { type: 'integer', default: 30 } },
            { name: 'X-Trace', in: 'header', required: true, schema: { type: 'string' } },
            { name: 'Accept', in: 'header', schema: { type: 'string' } },
          ],
          responses: ok,
        },
      },
    });
    const op = compileOne(doc);
    expect(op.inputSchema).toEqual({
      type: 'object',
      properties: {
        owner: { type: 'string', description: 'operation-level' },
        repo: { type: 'string' },
        per_page: { type: 'integer', default: 30 },
        'X-Trace': { type: 'string' },
      },
      required: ['owner', 'repo', 'X-Trace'],
      additionalProperties: false,
    });
    expect(op.request).toEqual({
      method: 'GET',
      path: '/repos/{owner}/{repo}',
      parameters: [
        { arg: 'owner', name: 'owner', in: 'path', required: true },
        { arg: 'repo', name: 'repo', in: 'path', required: true },
        { arg: 'per_page', name: 'per_page', in: 'query', required: false },
        { arg: 'X-Trace', name: 'X-Trace', in: 'header', required: true },
      ],
    });
  });

  it('disambiguates colliding argument names by location, and sanitises names', () => {
    const doc = documentOf('3.0', {
      '/items/{id}': {
        get: {
          parameters: [
            { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'id', in: 'query', schema: { type: 'string' } },
            { name: 'id', in: 'header', schema: { type: 'string' } },
            {
              name: 'filter[status]',
              in: 'query',
              style: 'deepObject',
              explode: true,
              schema: { type: 'string' },
            },
          ],
          responses: ok,
        },
      },
    });
    expect(compileOne(doc).request.parameters.map((p) => [p.arg, p.name, p.in, p.style])).toEqual([
      ['id', 'id', 'path', undefined],
      ['query_id', 'id', 'query', undefined],
      ['filter_status_', 'filter[status]', 'query', 'deepObject'],
      ['header_id', 'id', 'header', undefined],
    ]);
  });

  it('spreads a JSON object body into arguments, or keeps it as `body` when names collide', () => {
    const body = (properties: object) => ({
      required: true,
      content: {
        'application/json; charset=utf-8': { schema: { type: 'object', required: ['title'], properties } },
      },
    });
    const doc = documentOf('3.0', {
      '/a/{id}': {
        post: {
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: body({
            title: { type: 'string' },
            labels: { type: 'array', items: { type: 'string' } },
          }),
          responses: ok,
        },
        put: {
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: body({ id: { type: 'string' }, title: { type: 'string' } }),
          responses: ok,
        },
      },
    });
    const compiled = compileAll(doc);
    const post = compiled['POST /a/{id}'];
    const put = compiled['PUT /a/{id}'];
    if (typeof post === 'string' || typeof put === 'string' || !post || !put) throw new Error('not compiled');
    expect(post.inputSchema.required).toEqual(['id', 'title']);
    expect(post.request.body).toEqual({
      contentType: 'application/json',
      required: true,
      from: { kind: 'spread', args: ['title', 'labels'] },
    });
    expect(put.inputSchema.required).toEqual(['id', 'body']);
    expect(put.request.body).toEqual({
      contentType: 'application/json',
      required: true,
      from: { kind: 'property', arg: 'body' },
    });
  });

  it('compiles form bodies, 2.0 body and formData parameters and collectionFormat', () => {
    const doc = documentOf('2.0', {
      '/pets': {
        post: {
          consumes: ['application/x-www-form-urlencoded'],
          parameters: [
            { name: 'name', in: 'formData', type: 'string', required: true },
            {
              name: 'tags',
              in: 'query',
              type: 'array',
              items: { type: 'string' },
              collectionFormat: 'multi',
            },
          ],
          responses: ok,
        },
        put: {
          parameters: [
            { name: 'pet', in: 'body', required: true, schema: { type: 'array', items: { type: 'string' } } },
          ],
          responses: ok,
        },
      },
    });
    const compiled = compileAll(doc);
    expect(compiled['POST /pets']).toMatchObject({
      request: {
        parameters: [
          { arg: 'tags', name: 'tags', in: 'query', required: false, style: 'form', explode: true },
        ],
        body: {
          contentType: 'application/x-www-form-urlencoded',
          required: true,
          from: { kind: 'spread', args: ['name'] },
        },
      },
    });
    expect(compiled['PUT /pets']).toMatchObject({
      inputSchema: { properties: { body: { type: 'array', items: { type: 'string' } } }, required: ['body'] },
      request: { body: { contentType: 'application/json', from: { kind: 'property', arg: 'body' } } },
    });
  });

  it('skips operations with unsupported constructs, saying why', () => {
    const doc = documentOf('3.0', {
      '/upload': {
        post: {
          requestBody: { content: { 'text/plain': { schema: { type: 'string' } } } },
          responses: ok,
        },
        get: {
          parameters: [{ name: 'sid', in: 'cookie', required: true, schema: { type: 'string' } }],
          responses: ok,
        },
        put: {
          parameters: [{ name: 'p', in: 'query', style: 'matrix', schema: { type: 'string' } }],
          responses: ok,
        },
        options: { responses: ok },
      },
    });
    expect(compileAll(doc)).toEqual({
      'GET /upload': 'unsupported: required cookie parameter "sid"',
      'PUT /upload': 'unsupported: style "matrix" of parameter "p"',
      'POST /upload': 'unsupported: request body of type text/plain',
      'OPTIONS /upload': 'unsupported: method OPTIONS',
    });
  });

  it('gives an outputSchema for a 2xx JSON object response only', () => {
    const json = (schema: object) => ({ description: 'ok', content: { 'application/json': { schema } } });
    const doc = documentOf('3.1', {
      '/obj': {
        get: {
          responses: {
            '404': json({ type: 'object' }),
            '201': json({ properties: { id: { type: 'string' } } }),
          },
        },
      },
      '/list': { get: { responses: { '200': json({ type: 'array', items: { type: 'string' } }) } } },
      '/none': { delete: { responses: { '204': { description: 'gone' } } } },
    });
    const compiled = compileAll(doc);
    expect(compiled['GET /obj']).toMatchObject({
      outputSchema: { type: 'object', properties: { id: { type: 'string' } } },
    });
    expect(compiled['GET /list']).not.toHaveProperty('outputSchema');
    expect(compiled['DELETE /none']).not.toHaveProperty('outputSchema');
  });

  it('derives annotations from the method and writes an actionable description', () => {
    const doc = documentOf('3.0', {
      '/x/{id}': {
        get: {
          summary: 'Get an x',
          description: 'Get an x. See [the docs](https://example.com/docs) for <b>details</b>.',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          responses: ok,
        },
        put: { deprecated: true, responses: ok },
        delete: { responses: ok },
      },
    });
    const compiled = compileAll(doc);
    expect(compiled['GET /x/{id}']).toMatchObject({
      title: 'Get an x',
      description: 'Get an x.\n\nSee the docs for details.\n\nRequired: id.',
      annotations: { readOnlyHint: true, openWorldHint: true },
    });
    expect(compiled['PUT /x/{id}']).toMatchObject({
      description: 'Deprecated. PUT /x/{id}.',
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    });
    expect(compiled['DELETE /x/{id}']).toMatchObject({
      annotations: { destructiveHint: true, idempotentHint: true },
    });
  });

  // Issue 16: `#` and `?` in path keys were percent-encoded into the request path.
  it('drops a #... suffix of a path key, turns a literal ?a=b into fixed query, and skips what cannot be placed', () => {
    const doc = documentOf('3.0', {
      '/accesspoint/{name}#x-amz-account-id': {
        delete: {
          parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
          responses: ok,
        },
      },
      '/bucket?uploads&list-type=2&x=a%20b': { get: { responses: ok } },
      '/a?mode={mode}': { get: { responses: ok } },
      '/b#{frag}': { get: { responses: ok } },
      '/c?bad=%E0%A4%A': { get: { responses: ok } },
    });
    const compiled = compileAll(doc);
    expect(compiled['DELETE /accesspoint/{name}#x-amz-account-id']).toMatchObject({
      request: { method: 'DELETE', path: '/accesspoint/{name}' },
    });
    expect(compiled['GET /bucket?uploads&list-type=2&x=a%20b']).toMatchObject({
      request: {
        path: '/bucket',
        fixedQuery: [{ name: 'uploads' }, { name: 'list-type', value: '2' }, { name: 'x', value: 'a b' }],
      },
    });
    expect(compiled['GET /a?mode={mode}']).toBe(
      'unsupported: path "/a?mode={mode}" (a template variable in its query)',
    );
    expect(compiled['GET /b#{frag}']).toBe('unsupported: path "/b#{frag}" (a template variable after "#")');
    expect(compiled['GET /c?bad=%E0%A4%A']).toBe(
      'unsupported: path "/c?bad=%E0%A4%A" (a query that is not percent-encoded correctly)',
    );
  });

  it('compiles multipart bodies with file fields, and octet-stream bodies as one base64 argument', () => {
    const file = { type: 'string', format: 'binary', description: 'The document.' };
    const doc = documentOf('3.0', {
      '/files': {
        post: {
          requestBody: {
            required: true,
            content: {
              'multipart/form-data': {
                schema: {
                  type: 'object',
                  required: ['file'],
                  properties: {
                    file,
                    attachments: { type: 'array', items: file },
                    purpose: { type: 'string' },
                  },
                },
              },
            },
          },
          responses: ok,
        },
      },
      '/blobs/{name}': {
        put: {
          parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
          requestBody: {
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          },
          responses: ok,
        },
      },
    });
    const compiled = compileAll(doc);
    const upload = compiled['POST /files'];
    const blob = compiled['PUT /blobs/{name}'];
    if (typeof upload !== 'object' || typeof blob !== 'object') throw new Error('not compiled');
    // The argument README documents: {content (base64, required), filename, media_type}, nothing else.
    const fileArg = expect.objectContaining({
      type: 'object',
      description: 'The document. A file: its bytes base64-encoded in content, with filename and media_type.',
      properties: {
        content: expect.objectContaining({ type: 'string', contentEncoding: 'base64' }) as unknown,
        filename: expect.objectContaining({ type: 'string' }) as unknown,
        media_type: expect.objectContaining({ type: 'string' }) as unknown,
      },
      required: ['content'],
      additionalProperties: false,
    }) as unknown;
    expect(upload.inputSchema).toEqual({
      type: 'object',
      properties: {
        file: fileArg,
        attachments: { type: 'array', items: fileArg },
        purpose: { type: 'string' },
      },
      required: ['file'],
      additionalProperties: false,
    });
    expect(upload.request.body).toEqual({
      contentType: 'multipart/form-data',
      required: true,
      files: ['file', 'attachments'],
      from: { kind: 'spread', args: ['file', 'attachments', 'purpose'] },
    });
    expect(blob.inputSchema.properties).toMatchObject({
      body: { type: 'string', contentEncoding: 'base64', description: 'The bytes to send, base64-encoded.' },
    });
    expect(blob.request.body).toEqual({
      contentType: 'application/octet-stream',
      required: false,
      from: { kind: 'property', arg: 'body' },
    });
  });

  it('sends a 2.0 form with a file parameter as multipart', () => {
    const doc = documentOf('2.0', {
      '/pets/{id}/photo': {
        post: {
          consumes: ['multipart/form-data'],
          parameters: [
            { name: 'id', in: 'path', required: true, type: 'string' },
            { name: 'photo', in: 'formData', type: 'file', required: true },
            { name: 'caption', in: 'formData', type: 'string' },
          ],
          responses: ok,
        },
      },
    });
    expect(compileOne(doc).request.body).toEqual({
      contentType: 'multipart/form-data',
      required: true,
      files: ['photo'],
      from: { kind: 'spread', args: ['photo', 'caption'] },
    });
  });
});
