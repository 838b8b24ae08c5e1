import type { OAuthDeps } from './client.js';
import { OAuthConsent } from './consent.js';
import { McpDiscovery } from './discovery.js';
import { UpstreamClients } from './registration.js';
import { OAuthTokens } from './tokens.js';

export { ReapprovalNeededError, TemporaryRefreshError, type OAuthDeps } from './client.js';
export type { CallbackOutcome, StartInfo } from './consent.js';
export { clientDocument, CLIENT_DOCUMENT_PATH } from './registration.js';

/** OAuth2 connections end to end: consent (a link, approval in a browser) and the tokens' lifecycle. */
export class OAuthFlows {
  readonly consent: OAuthConsent;
  readonly tokens: OAuthTokens;

  constructor(deps: OAuthDeps) {
    const discovery = new McpDiscovery(deps.outbound, deps.config.allowPrivateNetwork);
    const upstream = new UpstreamClients({ ...deps, discovery });
    this.consent = new OAuthConsent(deps, upstream);
    this.tokens = new OAuthTokens(deps);
  }
}
