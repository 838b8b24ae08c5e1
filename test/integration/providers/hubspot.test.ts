import { describe, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { jsonAnswer, useProviderHarness, type Answer } from './helpers.js';

const TOKEN = 'CNq1-ZKsMhIHAAEAQAAAARjK9tQVIKWvzR0o4YeBASIUfakeAccessTokenForTests0Ahu';

const deal = (properties: Record<string, string>) => ({
  id: '18302930541',
  properties: { dealname: 'Acme renewal', amount: '12000', hs_object_id: '18302930541', ...properties },
  createdAt: '2026-03-02T10:00:00.000Z',
  updatedAt: '2026-03-04T16:20:00.000Z',
  archived: false,
});

/** A loopback HubSpot API: bearer token, JSON bodies, errors in HubSpot's shape. */
function hubspot(req: Received): Answer {
  const error = (status: number, category: string, message: string, extra: object = {}) =>
    jsonAnswer(status, {
      status: 'error',
      message,
      correlationId: 'b8f3c9a2-6d1e-4f7a-9c2b-3e5d7f9a1c4e',
      category,
      ...extra,
    });
  if (req.headers.authorization !== `Bearer ${TOKEN}`)
    return error(401, 'INVALID_AUTHENTICATION', 'Authentication credentials not found.');
  switch (`${req.method} ${req.url}`) {
    case 'POST /crm/objects/2026-03/contacts/search':
      return jsonAnswer(200, {
        total: 1,
        results: [
          {
            id: '551',
            properties: {
              email: 'ada@analytical.example',
              firstname: 'Ada',
              lastname: 'Lovelace',
              hs_object_id: '551',
            },
            createdAt: '2026-01-10T09:00:00.000Z',
            updatedAt: '2026-02-01T12:00:00.000Z',
            archived: false,
          },
        ],
      });
    case 'POST /crm/objects/2026-03/contacts':
      return error(409, 'CONFLICT', 'Contact already exists. Existing ID: 551');
    case 'GET /crm/objects/2026-03/0-3/18302930541?properties=dealname&properties=amount&associations=contacts':
      return jsonAnswer(200, {
        ...deal({}),
        associations: { contacts: { results: [{ id: '551', type: 'deal_to_contact' }] } },
      });
    case 'PATCH /crm/objects/2026-03/0-3/18302930541':
      return jsonAnswer(200, deal({ dealstage: 'closedwon' }));
    case 'PUT /crm/objects/2026-03/deals/18302930541/associations/default/companies/920':
      return jsonAnswer(200, {
        status: 'COMPLETE',
        results: [{ from: { id: '18302930541' }, to: { id: '920' } }],
      });
    case 'GET /crm/owners/2026-03?email=sam%40acme.example':
      return jsonAnswer(429, {
        status: 'error',
        message: 'You have reached your ten_secondly_rolling limit.',
        errorType: 'RATE_LIMIT',
        correlationId: 'c1d2e3f4-0000-4a5b-8c9d-0e1f2a3b4c5d',
        policyName: 'TEN_SECONDLY_ROLLING',
      });
    default:
      return error(404, 'OBJECT_NOT_FOUND', `No route ${req.method} ${req.url}`);
  }
}

const hubspotApi = useProviderHarness({
  provider: 'hubspot',
  auth: 'oauth',
  accessToken: TOKEN,
  account: '4561234',
  answer: hubspot,
});

describe('HubSpot over /mcp/ with a seeded OAuth connection', () => {
  it('searches contacts with a JSON POST to the 2026-03 search endpoint', async () => {
    const search = {
      query: 'lovelace',
      filterGroups: [{ filters: [{ propertyName: 'lifecyclestage', operator: 'EQ', value: 'customer' }] }],
      properties: ['email', 'firstname', 'lastname'],
      limit: 10,
    };
    await hubspotApi.expectCall({
      tool: 'hubspot_search_contacts',
      args: search,
      ok: 'ada@analytical.example',
      sent: {
        method: 'POST',
        url: '/crm/objects/2026-03/contacts/search',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        json: search,
      },
    });
  });

  it('reads a deal with repeated properties and associations query parameters', async () => {
    await hubspotApi.expectCall({
      tool: 'hubspot_get_deal',
      args: { dealId: '18302930541', properties: ['dealname', 'amount'], associations: ['contacts'] },
      ok: 'deal_to_contact',
      sent: {
        method: 'GET',
        url: '/crm/objects/2026-03/0-3/18302930541?properties=dealname&properties=amount&associations=contacts',
        body: '',
      },
    });
  });

  it('moves a deal to another stage with a PATCH of its properties', async () => {
    const properties = { dealstage: 'closedwon' };
    await hubspotApi.expectCall({
      tool: 'hubspot_update_deal',
      args: { dealId: '18302930541', properties },
      ok: 'closedwon',
      sent: { method: 'PATCH', url: '/crm/objects/2026-03/0-3/18302930541', json: { properties } },
    });
  });

  it('links a deal to a company with a bodiless PUT', async () => {
    await hubspotApi.expectCall({
      tool: 'hubspot_associate_records',
      args: {
        fromObjectType: 'deals',
        fromObjectId: '18302930541',
        toObjectType: 'companies',
        toObjectId: '920',
      },
      ok: true,
      sent: {
        method: 'PUT',
        url: '/crm/objects/2026-03/deals/18302930541/associations/default/companies/920',
        body: '',
      },
    });
  });

  it("passes HubSpot's own message on for a duplicate contact", async () => {
    const properties = { email: 'ada@analytical.example', firstname: 'Ada' };
    await hubspotApi.expectCall({
      tool: 'hubspot_create_contact',
      args: { properties },
      error: 'hubspot returned HTTP 409 Conflict: Contact already exists. Existing ID: 551',
      sent: { method: 'POST', url: '/crm/objects/2026-03/contacts', json: { properties } },
    });
  });

  it("reports a 429 as rate limiting, in HubSpot's words", async () => {
    await hubspotApi.expectCall({
      tool: 'hubspot_list_owners',
      args: { email: 'sam@acme.example' },
      error:
        /HTTP 429 Too Many Requests: You have reached your ten_secondly_rolling limit\.\nhubspot is rate limiting these calls/,
      sent: { method: 'GET', url: '/crm/owners/2026-03?email=sam%40acme.example' },
    });
  });
});
