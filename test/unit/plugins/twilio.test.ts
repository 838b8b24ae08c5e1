import { describe, expect, it } from 'vitest';
import type { PluginOutboundRequest } from '../../../core/catalog/plugins/types.js';
import { twilioPlugin } from '../../../plugins/twilio/index.js';
import { fakeContext, jsonResponse } from './context.js';

const SID = 'AC0123456789abcdef0123456789abcdef';

function twilioContext(...responses: ReturnType<typeof jsonResponse>[]) {
  const fake = fakeContext('twilio', ...responses);
  fake.ctx.credentials = () => Promise.resolve({ account_sid: SID, auth_token: 'f'.repeat(32) });
  return fake;
}

describe('twilio onRequest', () => {
  it('puts the connection’s account SID right after /Accounts, keeping the rest of the URL', async () => {
    const request: PluginOutboundRequest = {
      method: 'GET',
      url: new URL(
        'https://api.twilio.com/2010-04-01/Accounts/Messages/SM1f0e8ae6ade43cb3c0ce4525424e404f.json?x=1',
      ),
      headers: {},
    };
    await twilioPlugin.onRequest?.(request, twilioContext().ctx);
    expect(request.url.toString()).toBe(
      `https://api.twilio.com/2010-04-01/Accounts/${SID}/Messages/SM1f0e8ae6ade43cb3c0ce4525424e404f.json?x=1`,
    );
  });
});

describe('twilio checkCredential', () => {
  it('fetches the account and names it by its friendly name', async () => {
    const { ctx, requests } = twilioContext(jsonResponse(200, { sid: SID, friendly_name: 'Acme Support' }));
    expect(await twilioPlugin.checkCredential?.(ctx)).toEqual({ ok: true, account: 'Acme Support' });
    expect(requests).toEqual([{ method: 'GET', path: `/${SID}.json` }]);
  });

  it('accepts an account without a friendly name, naming no account', async () => {
    const { ctx } = twilioContext(jsonResponse(200, { sid: SID, friendly_name: null }));
    expect(await twilioPlugin.checkCredential?.(ctx)).toEqual({ ok: true });
  });

  it('refuses with Twilio’s message and error code', async () => {
    const error = {
      code: 20003,
      message: 'Authenticate',
      more_info: 'https://www.twilio.com/docs/errors/20003',
      status: 401,
    };
    const { ctx } = twilioContext(jsonResponse(401, error));
    const result = await twilioPlugin.checkCredential?.(ctx);
    expect(result).toMatchObject({ ok: false });
    expect(result?.ok === false && result.message).toMatch(
      /^Twilio answered HTTP 401: Authenticate \(Twilio error 20003\)\. Check that the Account SID/,
    );
  });
});
