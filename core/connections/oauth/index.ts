import type { FastifyBaseLogger } from 'fastify';
import type { ProviderEntry } from '../../catalog/types.js';
import type { Config } from '../../config.js';
import type { Keyring } from '../../keyring.js';
import type { PluginRegistry } from '../../plugins/registry.js';
import type { Store } from '../../store/types.js';
import type { ProviderClient } from '../../upstream/provider-client.js';
import type { OAuthApps } from '../oauth-apps.js';
import type { ConnectionService } from '../service.js';
import { OAuthConsent } from './consent.js';
import { OAuthTokens } from './tokens.js';

export { ReapprovalNeededError, TemporaryRefreshError } from './client.js';
export type { CallbackOutcome, StartInfo } from './consent.js';

export interface OAuthDeps {
  store: Store;
  keyring: Keyring;
  apps: OAuthApps;
  connections: ConnectionService;
  client: ProviderClient;
  plugins: PluginRegistry;
  catalog: { readonly current: { providers: ReadonlyMap<string, ProviderEntry> } };
  config: Config;
  log: FastifyBaseLogger;
  /** Delivers an operator event (TOOLGATE_EVENTS_WEBHOOK_URL); never given secrets. */
  emitEvent: (event: Record<string, unknown>) => void;
}

/** OAuth2 connections end to end: consent (a link, approval in a browser) and the tokens' lifecycle. */
export class OAuthFlows {
  readonly consent: OAuthConsent;
  readonly tokens: OAuthTokens;

  constructor(deps: OAuthDeps) {
    this.consent = new OAuthConsent(deps);
    this.tokens = new OAuthTokens(deps);
  }
}
