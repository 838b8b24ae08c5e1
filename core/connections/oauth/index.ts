import type { OAuthDeps } from './client.js';
import { OAuthConsent } from './consent.js';
import { OAuthTokens } from './tokens.js';

export { ReapprovalNeededError, TemporaryRefreshError, type OAuthDeps } from './client.js';
export type { CallbackOutcome, StartInfo } from './consent.js';

/** OAuth2 connections end to end: consent (a link, approval in a browser) and the tokens' lifecycle. */
export class OAuthFlows {
  readonly consent: OAuthConsent;
  readonly tokens: OAuthTokens;

  constructor(deps: OAuthDeps) {
    this.consent = new OAuthConsent(deps);
    this.tokens = new OAuthTokens(deps);
  }
}
