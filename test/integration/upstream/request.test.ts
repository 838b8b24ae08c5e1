/**
 * Requests compiled from an OpenAPI document arrive as the document means them (issue 16): path
 * keys with `#` and `?`, multipart bodies with files, octet-stream bodies. The loopback API records
 * the exact path and query, and parses multipart bodies with undici's own parser.
 */
import { describe, expect, it } from 'vitest';
import { MAX_UPLOAD_BYTES } from '../../../core/upstream/request.js';
import type { Received } from '../../helpers/receiver.js';
import { expectToolError, expectToolOk } from '../../helpers/results.js';
import { useProviderHarness } from '../providers/helpers.js';

const FIXTURES = 'test/fixtures/catalog/requests';

const p = useProviderHarness({
  provider: 'filebox',
  auth: 'connect',
  manifests: [`${FIXTURES}/filebox.yaml`, `${FIXTURES}/filebox.openapi.yaml`],
  basePath: '/v1',
  answer: () => ({ status: 201, body: '{"ok":true}', headers: { 'content-type': 'application/json' } }),
});

/** The one request the API received since the last look. */
function only(): Received {
  const requests = p.sent();
  expect(requests).toHaveLength(1);
  return requests[0]!;
}

/** Every byte value, so an encoding that is not binary-safe shows. */
const BYTES = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));

async function formData(request: Received): Promise<FormData> {
  const type = request.headers['content-type'] ?? '';
  expect(type).toMatch(/^multipart\/form-data; boundary=/);
  return new Response(request.bytes, { headers: { 'content-type': type } }).formData();
}

async function bytesOf(entry: unknown): Promise<Buffer> {
  if (!(entry instanceof Blob)) throw new Error(`not a file: ${String(entry)}`);
  return Buffer.from(await entry.arrayBuffer());
}

describe('OpenAPI requests on the wire', () => {
  it('drops the #... of a path key from the request path', async () => {
    expectToolOk(
      await p.call('filebox_delete_access_point', { name: 'ap/1', 'x-amz-account-id': '123456789012' }),
    );
    const request = only();
    expect(request.method).toBe('DELETE');
    expect(request.url).toBe('/v1/accesspoint/ap%2F1');
    expect(request.headers['x-amz-account-id']).toBe('123456789012');
  });

  it("sends a path key's literal ?a=b as query parameters, before the arguments", async () => {
    expectToolOk(await p.call('filebox_list_uploads', { prefix: 'a b&c' }));
    expect(only().url).toBe('/v1/uploads?uploads&list-type=2&prefix=a%20b%26c');
    expectToolOk(await p.call('filebox_list_uploads', {}));
    expect(only().url).toBe('/v1/uploads?uploads&list-type=2');
  });

  it('sends files and fields as multipart/form-data, bytes, file names and media types intact', async () => {
    expectToolOk(
      await p.call('filebox_upload_files', {
        file: {
          content: BYTES.toString('base64'),
          filename: 'report "Q1".pdf',
          media_type: 'application/pdf',
        },
        extra: [
          { content: Buffer.from('first').toString('base64'), filename: 'a.txt', media_type: 'text/plain' },
          { content: BYTES.subarray(0, 3).toString('base64') },
        ],
        purpose: 'backup',
        tags: ['x', 'y'],
        meta: { owner: 'ann' },
      }),
    );
    const form = await formData(only());
    const file = form.get('file') as File;
    expect(await bytesOf(file)).toEqual(BYTES);
    expect(file.name).toBe('report "Q1".pdf');
    expect(file.type).toBe('application/pdf');
    const [first, second] = form.getAll('extra') as File[];
    expect([first?.name, first?.type, second?.name, second?.type]).toEqual([
      'a.txt',
      'text/plain',
      'extra',
      'application/octet-stream',
    ]);
    expect((await bytesOf(first!)).toString()).toBe('first');
    expect(await bytesOf(second!)).toEqual(BYTES.subarray(0, 3));
    expect(form.get('purpose')).toBe('backup');
    expect(form.getAll('tags')).toEqual(['x', 'y']);
    expect(form.get('meta')).toBe('{"owner":"ann"}');
  });

  it('sends an octet-stream body as the bytes of its base64 argument', async () => {
    expectToolOk(await p.call('filebox_put_blob', { key: 'k1', body: BYTES.toString('base64') }));
    const request = only();
    expect(request.method).toBe('PUT');
    expect(request.url).toBe('/v1/blobs/k1');
    expect(request.headers['content-type']).toBe('application/octet-stream');
    expect(request.bytes).toEqual(BYTES);
  });

  it('refuses files over the upload limit and content that is not base64, sending nothing', async () => {
    const big = Buffer.alloc(MAX_UPLOAD_BYTES + 1, 7).toString('base64');
    expectToolError(
      await p.call('filebox_upload_files', { file: { content: big } }),
      'argument `file.content` makes the files of this call 2.0 MB decoded; at most 2.0 MB can be sent in one call',
    );
    expectToolError(
      await p.call('filebox_put_blob', { key: 'k1', body: big }),
      'argument `body` makes the files of this call',
    );
    expectToolError(
      await p.call('filebox_upload_files', { file: { content: 'not base64!' } }),
      'argument `file.content` must be base64 text',
    );
    expect(p.sent()).toEqual([]);
  });
});
