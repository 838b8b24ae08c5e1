import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { jsonAnswer, useProviderHarness, type Answer } from './helpers.js';

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

const p = useProviderHarness({ provider: 'airtable', auth: 'connect', answer: airtable });

describe('airtable through /mcp/', () => {
  it('checks the token with /v0/meta/whoami and names the account by its email', async () => {
    const wrong = await p.connectProvider({ api_key: 'patWrong.token' });
    expect(wrong.text).toMatch(/Airtable refused the credential \(HTTP 401: Authentication required\)/);
    const connected = await p.connectProvider({ api_key: TOKEN });
    expect(connected.text).toContain('Connected Airtable as ann@acme.test');
    p.expectSent(
      { method: 'GET', url: '/v0/meta/whoami' },
      { method: 'GET', url: '/v0/meta/whoami', headers: { authorization: `Bearer ${TOKEN}` } },
      { method: 'GET', url: '/v0/meta/whoami' },
    );
  });

  it('lists records with a formula, fields and sort in the body of POST …/listRecords', async () => {
    const query = {
      filterByFormula: "{Status} = 'Open'",
      fields: ['Name', 'Status'],
      sort: [{ field: 'Name', direction: 'asc' }],
      pageSize: 50,
    };
    await p.expectCall({
      tool: 'airtable_list_records',
      args: { baseId: BASE, tableIdOrName: 'Open tasks', ...query },
      ok: ['Ship v2', 'itrHz3bLsXg1vKw2L/rec560UJdUtocSouk'],
      sent: {
        method: 'POST',
        url: `/v0/${BASE}/Open%20tasks/listRecords`,
        headers: { 'content-type': 'application/json' },
        json: query,
      },
    });
  });

  it('creates records as {records: [{fields}], typecast}', async () => {
    const created = await p.call('airtable_create_records', {
      baseId: BASE,
      tableIdOrName: 'tblQ4p2mGkHkA2rEp',
      records: [{ fields: { Name: 'Write docs' } }],
      typecast: true,
    });
    expect(created.text).toContain('recNew0000000001');
    p.expectSent({
      method: 'POST',
      url: `/v0/${BASE}/tblQ4p2mGkHkA2rEp`,
      json: { records: [{ fields: { Name: 'Write docs' } }], typecast: true },
    });
  });

  it('passes Airtable’s error messages to the agent', async () => {
    const records = [{ id: 'rec560UJdUtocSouk', fields: { Due: 'next week' } }];
    await p.expectCall({
      tool: 'airtable_update_records',
      args: { baseId: BASE, tableIdOrName: 'tblQ4p2mGkHkA2rEp', records },
      error: 'airtable returned HTTP 422 Unprocessable Entity: Field "Due" cannot accept the provided value',
      sent: { method: 'PATCH', url: `/v0/${BASE}/tblQ4p2mGkHkA2rEp`, json: { records } },
    });
    await p.expectCall({
      tool: 'airtable_get_record',
      args: {
        baseId: 'appNotShared00000',
        tableIdOrName: 'tblQ4p2mGkHkA2rEp',
        recordId: 'rec560UJdUtocSouk',
      },
      error: [
        /HTTP 403 Forbidden: Invalid permissions, or the requested model was not found/,
        'may lack a permission or scope',
      ],
      sent: { method: 'GET', url: '/v0/appNotShared00000/tblQ4p2mGkHkA2rEp/rec560UJdUtocSouk' },
    });
  });

  it('refuses an id of the wrong kind before calling Airtable', async () => {
    const call = p.call('airtable_get_record', {
      baseId: 'tblQ4p2mGkHkA2rEp',
      tableIdOrName: 'Tasks',
      recordId: 'rec560UJdUtocSouk',
    });
    await expect(call).rejects.toThrow(/baseId/);
    p.expectSent();
  });
});
