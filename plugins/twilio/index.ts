/**
 * Twilio (manifests/twilio.yaml). Every resource of the 2010-04-01 API lives under
 * /2010-04-01/Accounts/{AccountSid} (https://www.twilio.com/docs/usage/api), and the SID is a
 * credential of the connection, which the executor does not template into URLs. The manifest's base
 * URL therefore ends in /Accounts, its document's paths are relative to the account, and this plugin
 * puts the connection's SID in between. It also checks the credential by fetching the account
 * (GET /Accounts/{AccountSid}.json), which names it.
 */
import type { PluginContext, ProviderPlugin } from '../../core/catalog/plugins/types.js';

// The base URL's last segment: the SID goes right after it.
const ACCOUNTS_SEGMENT = /\/Accounts(?=\/)/;

/** The twilio plugin: the account SID in every path, and a connect-time account check. */
export const twilioPlugin: ProviderPlugin = {
  id: 'twilio',

  async onRequest(request, ctx) {
    const sid = await accountSid(ctx);
    request.url.pathname = request.url.pathname.replace(
      ACCOUNTS_SEGMENT,
      `/Accounts/${encodeURIComponent(sid)}`,
    );
  },

  async checkCredential(ctx) {
    const sid = await accountSid(ctx);
    const response = await ctx.http.request({ method: 'GET', path: `/${encodeURIComponent(sid)}.json` });
    const body = isRecord(response.body) ? response.body : {};
    if (response.status >= 200 && response.status < 300) {
      const name = body.friendly_name;
      return typeof name === 'string' && name !== '' ? { ok: true, account: name } : { ok: true };
    }
    // Twilio's error shape: {code, message, more_info, status} (https://www.twilio.com/docs/usage/twilios-response).
    const said = typeof body.message === 'string' ? `: ${body.message}` : '';
    const code = typeof body.code === 'number' ? ` (Twilio error ${body.code})` : '';
    return {
      ok: false,
      message:
        `Twilio answered HTTP ${response.status}${said}${code}. Check that the Account SID and the Auth ` +
        'Token both come from Twilio Console > Account Info, and that the account is active.',
    };
  },
};

async function accountSid(ctx: PluginContext): Promise<string> {
  const sid = (await ctx.credentials()).account_sid;
  // The connect flow stores both credentials; a connection without the SID cannot reach any path.
  if (sid === undefined) throw new Error('the Twilio connection has no account_sid');
  return sid;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
