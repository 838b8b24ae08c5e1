import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { expectToolError } from '../../helpers/results.js';
import { formBody, jsonAnswer, useProviderHarness, type Answer } from './helpers.js';

const KEY = 'rk_test_51Nabcdefghijklmnopqrstuvwxyz0123456789';
const VERSION = '2026-10-28.endive';

const CUSTOMER = {
  id: 'cus_NffrFeUfNV2Hib',
  object: 'customer',
  balance: 0,
  created: 1767225600,
  currency: null,
  description: null,
  email: 'jane@example.com',
  livemode: false,
  metadata: {},
  name: 'Jane Rivera',
  phone: null,
};

/** Stripe's error shape: {error: {type, code, message, param, doc_url}}. */
function stripeError(status: number, type: string, code: string, message: string, param?: string): Answer {
  return jsonAnswer(status, {
    error: {
      type,
      code,
      message,
      ...(param ? { param } : {}),
      doc_url: `https://stripe.com/docs/error-codes/${code}`,
    },
  });
}

/** A loopback Stripe: bearer key and pinned version checked, answers in Stripe's shapes. */
function stripe(req: Received): Answer {
  if (req.headers.authorization !== `Bearer ${KEY}`)
    return stripeError(
      401,
      'invalid_request_error',
      'api_key_invalid',
      'Invalid API Key provided: rk_test_****nope',
    );
  if (req.headers['stripe-version'] !== VERSION)
    return stripeError(400, 'invalid_request_error', 'api_version_invalid', 'Invalid Stripe API version');
  const route = `${req.method} ${req.url}`;
  if (route === 'GET /v1/balance')
    return jsonAnswer(200, {
      object: 'balance',
      available: [{ amount: 125000, currency: 'usd', source_types: { card: 125000 } }],
      pending: [{ amount: 4200, currency: 'usd', source_types: { card: 4200 } }],
      livemode: false,
    });
  if (route === 'GET /v1/account')
    return jsonAnswer(200, { id: 'acct_1Nv0FGQ9RKHgCVdK', object: 'account', email: 'billing@acme.test' });
  if (req.method === 'GET' && req.url.startsWith('/v1/customers/search?'))
    return jsonAnswer(200, {
      object: 'search_result',
      data: [CUSTOMER],
      has_more: false,
      next_page: null,
      url: '/v1/customers/search',
    });
  if (route === 'GET /v1/customers/cus_missing')
    return stripeError(
      404,
      'invalid_request_error',
      'resource_missing',
      "No such customer: 'cus_missing'",
      'id',
    );
  if (route === 'POST /v1/payment_intents')
    return jsonAnswer(200, {
      id: 'pi_3MtwBwLkdIwHu7ix28a3tqPa',
      object: 'payment_intent',
      amount: 2000,
      amount_received: 0,
      currency: 'usd',
      customer: CUSTOMER.id,
      description: null,
      latest_charge: null,
      status: 'requires_payment_method',
      created: 1767225700,
    });
  if (req.method === 'GET' && req.url.startsWith('/v1/charges?'))
    return jsonAnswer(200, { object: 'list', data: [], has_more: false, url: '/v1/charges' });
  if (route === 'POST /v1/refunds')
    return stripeError(
      400,
      'invalid_request_error',
      'charge_already_refunded',
      'Charge ch_3MtwBwLkdIwHu7ix0snN0B15 has already been refunded.',
    );
  return stripeError(404, 'invalid_request_error', 'resource_missing', `Unrecognized request URL (${route})`);
}

const p = useProviderHarness({ provider: 'stripe', auth: 'connect', answer: stripe });

describe('stripe through /mcp/', () => {
  it('checks the key with GET /v1/balance and refuses a wrong one in Stripe’s words', async () => {
    expectToolError(
      await p.connectProvider({ api_key: 'rk_test_nope' }),
      /Stripe refused the credential \(HTTP 401: Invalid API Key provided: rk_test_\*\*\*\*nope\).*Nothing was stored/s,
    );
    p.expectSent({ method: 'GET', url: '/v1/balance' });

    const publishable = await p.connectProvider({ api_key: 'pk_test_123' });
    expect(publishable.text).toMatch(/credentials\.api_key does not look like a Stripe/);
    p.expectSent();
  });

  it('connects with a restricted key, names the account, and pins the API version', async () => {
    const connected = await p.connectProvider({ api_key: KEY });
    expect(connected.text).toContain('Connected Stripe as billing@acme.test');
    p.expectSent(
      {
        method: 'GET',
        url: '/v1/balance',
        headers: { authorization: `Bearer ${KEY}`, 'stripe-version': VERSION },
        body: '',
      },
      { method: 'GET', url: '/v1/account' },
    );
    expect(await p.client.listToolNames()).toEqual(
      expect.arrayContaining([
        'stripe_search_customers',
        'stripe_create_payment_intent',
        'stripe_get_balance',
      ]),
    );
  });

  it('searches customers with the query percent-encoded', async () => {
    await p.expectCall({
      tool: 'stripe_search_customers',
      args: { query: "email:'jane@example.com'", limit: 5 },
      ok: 'cus_NffrFeUfNV2Hib',
      sent: { method: 'GET', url: '/v1/customers/search?query=email%3A%27jane%40example.com%27&limit=5' },
    });
  });

  it('form-encodes a payment intent with bracket notation for nested values', async () => {
    const { requests } = await p.expectCall({
      tool: 'stripe_create_payment_intent',
      args: {
        amount: 2000,
        currency: 'usd',
        customer: CUSTOMER.id,
        automatic_payment_methods: { enabled: true },
        metadata: { order_id: '42', note: 'a&b=c' },
      },
      ok: 'requires_payment_method',
      sent: {
        method: 'POST',
        url: '/v1/payment_intents',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body:
          'amount=2000&currency=usd&customer=cus_NffrFeUfNV2Hib&automatic_payment_methods[enabled]=true' +
          '&metadata[order_id]=42&metadata[note]=a%26b%3Dc',
      },
    });
    expect(formBody(requests[0])).toContainEqual(['metadata[note]', 'a&b=c']);
  });

  it('sends a range filter as created[gte] and pages with limit', async () => {
    await p.call('stripe_list_charges', {
      customer: CUSTOMER.id,
      created: { gte: 1767225600 },
      limit: 2,
    });
    p.expectSent({
      method: 'GET',
      url: '/v1/charges?customer=cus_NffrFeUfNV2Hib&created[gte]=1767225600&limit=2',
    });
  });

  it('surfaces Stripe’s error message for a missing object and a refused refund', async () => {
    await p.expectCall({
      tool: 'stripe_get_customer',
      args: { customer: 'cus_missing' },
      error: /stripe returned HTTP 404 Not Found: No such customer: 'cus_missing'/,
      sent: { method: 'GET', url: '/v1/customers/cus_missing' },
    });
    await p.expectCall({
      tool: 'stripe_create_refund',
      args: { charge: 'ch_3MtwBwLkdIwHu7ix0snN0B15' },
      error: 'HTTP 400 Bad Request: Charge ch_3MtwBwLkdIwHu7ix0snN0B15 has already been refunded.',
      sent: { method: 'POST', url: '/v1/refunds', form: [['charge', 'ch_3MtwBwLkdIwHu7ix0snN0B15']] },
    });
  });

  it('shows the account and the documented limits in inspect_provider, never the key', async () => {
    const inspected = await p.inspect();
    expect(inspected).toContain('Limits: About 100 requests per second in live mode');
    expect(inspected).toContain('State here: connected as billing@acme.test');
    expect(inspected).not.toContain(KEY);
  });
});
