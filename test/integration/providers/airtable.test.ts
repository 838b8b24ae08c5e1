import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import {
  jsonAnswer,
  jsonBody,
  startLoopbackProvider,
  type Answer,
  type LoopbackProvider,
} from './helpers.js';

const TOKEN = 'patAbCdEfGhIjKlMn.0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
const BASE = 'appLkNDICXNqxSDhG';
const RECORD = {
  id: 'rec560UJdUtocSouk',
  createdTime: '2026-11-02T10:00:00.000Z',
  fields: { Name: 'Ship v2', Status: 'Open' },
};

/** Airtable's error shape: {error: {type, message}}. */
function airtableError(status: number, type: string, message: string): Answer {
  return jsonAnswer(status, { error: { type, message } });
}

/** A loopback Airtable Web API. */
function airtable(req: Received): Answer {
  if (req.headers.authorization !== `Bearer ${TOKEN}`)
    return airtableError(401, 'AUTHENTICATION_REQUIRED', 'Authentication required');
  const route = `${req.method} ${req.url}`;
  if (route === 'GET /v0/meta/whoami')
    return jsonAnswer(200, { id: 'usrL2PNC5o3H4lBEi', email: 'ann@acme.test' });
  if (route === `POST /v0/${BASE}/Open%20tasks/listRecords`)
    return jsonAnswer(200, { records: [RECORD], offset: 'itrHz3bLsXg1vKw2L/rec560UJdUtocSouk' });
  if (route === `POST /v0/${BASE}/tblQ4p2mGkHkA2rEp`)
    return jsonAnswer(200, {
      records: [
        { id: 'recNew0000000001', createdTime: '2026-11-20T10:00:00.000Z', fields: { Name: 'Write docs' } },
      ],
    });
  if (route === `PATCH /v0/${BASE}/tblQ4p2mGkHkA2rEp`)
    return airtableError(
      422,
      'INVALID_VALUE_FOR_COLUMN',
      'Field "Due" cannot accept the provided value: "next week" is not a valid date',
    );
  if (route === 'GET /v0/appNotShared00000/tblQ4p2mGkHkA2rEp/rec560UJdUtocSouk')
    return airtableError(
      403,
      'INVALID_PERMISSIONS_OR_MODEL_NOT_FOUND',
      'Invalid permissions, or the requested model was not found. Check that both your user and your token have the required permissions, and that the model names and/or ids are correct.',
    );
  return airtableError(404, 'NOT_FOUND', `Could not find what you are looking for (${route})`);
}

let p: LoopbackProvider;

beforeAll(async () => {
  p = await startLoopbackProvider({ provider: 'airtable', respond: airtable });
});
afterAll(() => p.close());

describe('airtable through /mcp/', () => {
  it('checks the token with /v0/meta/whoami and names the account by its email', async () => {
    const wrong = await p.client.callTool('connect_provider', {
      provider: 'airtable',
      credentials: { api_key: 'patWrong.token' },
    });
    expect(wrong.content[0]!.text).toMatch(
      /Airtable refused the credential \(HTTP 401: Authentication required\)/,
    );
    const connected = await p.client.callTool('connect_provider', {
      provider: 'airtable',
      credentials: { api_key: TOKEN },
    });
    expect(connected.content[0]!.text).toContain('Connected Airtable as ann@acme.test');
    const requests = p.sent();
    expect(requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /v0/meta/whoami',
      'GET /v0/meta/whoami',
      'GET /v0/meta/whoami',
    ]);
    expect(requests[1]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('lists records with a formula, fields and sort in the body of POST …/listRecords', async () => {
    const listed = await p.client.callTool('airtable_list_records', {
      baseId: BASE,
      tableIdOrName: 'Open tasks',
      filterByFormula: "{Status} = 'Open'",
      fields: ['Name', 'Status'],
      sort: [{ field: 'Name', direction: 'asc' }],
      pageSize: 50,
    });
    expect(listed.isError).toBeFalsy();
    expect(listed.content[0]!.text).toContain('Ship v2');
    expect(listed.content[0]!.text).toContain('itrHz3bLsXg1vKw2L/rec560UJdUtocSouk');
    const [sent] = p.sent();
    expect(sent).toMatchObject({ method: 'POST', url: `/v0/${BASE}/Open%20tasks/listRecords` });
    expect(sent!.headers['content-type']).toBe('application/json');
    expect(jsonBody(sent)).toEqual({
      filterByFormula: "{Status} = 'Open'",
      fields: ['Name', 'Status'],
      sort: [{ field: 'Name', direction: 'asc' }],
      pageSize: 50,
    });
  });

  it('creates records as {records: [{fields}], typecast}', async () => {
    const created = await p.client.callTool('airtable_create_records', {
      baseId: BASE,
      tableIdOrName: 'tblQ4p2mGkHkA2rEp',
      records: [{ fields: { Name: 'Write docs' } }],
      typecast: true,
    });
    expect(created.content[0]!.text).toContain('recNew0000000001');
    const [sent] = p.sent();
    expect(sent).toMatchObject({ method: 'POST', url: `/v0/${BASE}/tblQ4p2mGkHkA2rEp` });
    expect(jsonBody(sent)).toEqual({ records: [{ fields: { Name: 'Write docs' } }], typecast: true });
  });

  it('passes Airtable’s error messages to the agent', async () => {
    const invalid = await p.client.callTool('airtable_update_records', {
      baseId: BASE,
      tableIdOrName: 'tblQ4p2mGkHkA2rEp',
      records: [{ id: 'rec560UJdUtocSouk', fields: { Due: 'next week' } }],
    });
    expect(invalid.isError).toBe(true);
    expect(invalid.content[0]!.text).toContain(
      'airtable returned HTTP 422 Unprocessable Entity: Field "Due" cannot accept the provided value',
    );
    expect(p.sent()[0]).toMatchObject({ method: 'PATCH', url: `/v0/${BASE}/tblQ4p2mGkHkA2rEp` });

    const hidden = await p.client.callTool('airtable_get_record', {
      baseId: 'appNotShared00000',
      tableIdOrName: 'tblQ4p2mGkHkA2rEp',
      recordId: 'rec560UJdUtocSouk',
    });
    expect(hidden.isError).toBe(true);
    expect(hidden.content[0]!.text).toMatch(
      /HTTP 403 Forbidden: Invalid permissions, or the requested model was not found/,
    );
    expect(hidden.content[0]!.text).toContain('may lack a permission or scope');
    expect(p.sent()[0]!.url).toBe('/v0/appNotShared00000/tblQ4p2mGkHkA2rEp/rec560UJdUtocSouk');
  });

  it('refuses an id of the wrong kind before calling Airtable', async () => {
    const call = p.client.callTool('airtable_get_record', {
      baseId: 'tblQ4p2mGkHkA2rEp',
      tableIdOrName: 'Tasks',
      recordId: 'rec560UJdUtocSouk',
    });
    await expect(call).rejects.toThrow(/baseId/);
    expect(p.sent()).toEqual([]);
  });
});
