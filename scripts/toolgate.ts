#!/usr/bin/env node
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PLUGINS } from '../plugins/index.js';
import {
  CatalogHolder,
  formatFindings,
  hasErrors,
  validateCatalogDir,
  type CatalogReport,
} from '../core/catalog/index.js';
import { adminToken } from '../core/http/admin.js';
import { PluginRegistry } from '../core/catalog/plugins/registry.js';
import { hashSecretBinding, KeyService } from '../core/auth/key-service.js';
import { ConfigError, loadConfig, type Config } from '../core/config.js';
import { MASTER_KEY_WARNING, openCore } from '../core/admin/open.js';
import { mcpServersConfig } from '../core/admin/operations.js';
import { auditFilter, auditJsonLine, auditTable, MAX_AUDIT_LIMIT } from '../core/admin/audit.js';
import { InputError } from '../core/admin/input.js';
import { IdentityProviderOperations } from '../core/admin/identity-providers.js';
import { PolicyOperations, type PolicyView } from '../core/admin/policies.js';
import { hashPassword, MIN_PASSWORD_LENGTH } from '../core/admin/password.js';
import { OAuthApps } from '../core/connections/oauth-apps.js';
import { rotateMasterKey } from '../core/admin/master-key.js';
import { KEY_TYPES, type KeyType } from '../core/domain.js';
import { Keyring, loadMasterKey, masterKeyFile } from '../core/keyring.js';
import { formatTransfer, redactedUrl, transferStore } from '../core/store/transfer.js';

/**
 * The `toolgate` command. It works on the same data dir as a running server, and what it changes
 * takes effect there at once (the server reads keys from the store on every request).
 *
 * The gateway (Fastify, the MCP SDK, the front door's oidc-provider) and the OpenAPI drafter are
 * loaded by the commands that use them, not by every command: `keys create` and the like start in
 * a fraction of the time.
 */
const USAGE = `Usage: toolgate <command>

  serve                                           start the gateway (default)
  keys create --client NAME --type solo|client|platform
                                                  create an API key; prints it once
  keys list                                       one key a line, its id first
  keys revoke ID                                  revoke a key; takes effect on the next request
  reports list [--status open|resolved]           problem reports filed with report_problem
  audit list [--since T --until T --client NAME --org ORG_ID --user USER_ID --provider ID
              --outcome ok|error|refused|failed --event EVENT --limit N]
                                                  the audit trail, newest first, as a table (100 entries
                                                  unless --limit); T is an ISO time or an age (90m, 24h, 7d)
  audit export [same filters]                     the same as JSON lines, every match unless --limit
  catalog validate [DIR]                          check every manifest (default: the manifests dir); exit 1 on errors
  catalog reload                                  make the running server reload its catalog now, and print the report
  provider add --openapi FILE_OR_URL --id ID [--operations SELECTORS] [--manifests DIR] [--force]
                                                  draft manifests/ID.yaml from an OpenAPI document, write it
                                                  with the document (or, with --operations, the subset of
                                                  it those selectors pick: "tag=issues;GET /user;listPets"),
                                                  validate it, and list what to review by hand
  master-key rotate                               re-encrypt every stored secret under a new master key
  store migrate --from DIR --to postgres://USER:PASSWORD@HOST:5432/DATABASE
                                                  move the SQLite deployment of data dir DIR (old gateway
                                                  stopped) into PostgreSQL; resumable; verifies counts
  oauth-app set PROVIDER --client-id ID [--org ORG_ID --client NAME] [--name N --logo URL --accent #RRGGBB]
                                                  set the operator's (or an organization's) OAuth app; the
                                                  client secret is read from standard input or
                                                  TOOLGATE_OAUTH_CLIENT_SECRET, never from the command line
  oauth-app list                                  the OAuth apps, never their secrets
  policy set CLIENT [--org ORG_ID] [--surface auto|compact|full] [--allow A,B] [--deny C,D]
                                                  which providers and tools a client (or one of its
                                                  organizations) exposes, and its default tool list;
                                                  entries are provider ids or tool names, * at the end
                                                  matching any suffix (github_*); --allow '' allows all
  policy show CLIENT [--org ORG_ID]               the policy in force (the default when none is set)
  policy clear CLIENT [--org ORG_ID]              remove it: every tool, surface auto
  idp set --key KEY_ID --name NAME --issuer URL --client-id ID
          --client-secret-file FILE | --client-secret-env VAR
          [--user-claim sub] [--org-claim CLAIM] [--display-name TEXT]
                                                  let people sign in at the front door through the key's
                                                  own OpenID Connect identity provider: NAME is what they
                                                  type; its claims give user_id (and org_id, platform keys)
  idp list                                        the identity providers, never their secrets
  idp remove NAME                                 remove one; sign-ins under way through it end
  admin set-password                              set the dashboard's admin password, read from standard
                                                  input or TOOLGATE_ADMIN_PASSWORD, never from the command
                                                  line; signs every dashboard session out

Settings come from the environment (TOOLGATE_*); see README.md.`;

class UsageError extends Error {}

async function withKeys<T>(config: Config, fn: (keys: KeyService) => Promise<T>): Promise<T> {
  const core = await openCore(config);
  if (core.masterKeyFile) process.stderr.write(`${MASTER_KEY_WARNING} (${core.masterKeyFile})\n`);
  try {
    const keys = new KeyService(core.store, core.keyring, core.coordination.bus, core.audit);
    await keys.init();
    return await fn(keys);
  } finally {
    await core.close();
  }
}

/**
 * How long a shutdown may take beyond TOOLGATE_SHUTDOWN_GRACE_MS (the wait for calls in flight):
 * closing the SDK's handlers, the outbound pools, the bus and the store. Past it the process exits
 * anyway, saying so, rather than linger with its listener closed.
 */
const SHUTDOWN_SLACK_MS = 5_000;

async function serve(config: Config): Promise<void> {
  const { Gateway } = await import('../core/gateway.js');
  const gateway = await Gateway.create({ config, plugins: PLUGINS });
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) {
      // A process group's second signal (npm forwarding one, a supervisor repeating it) neither
      // restarts nor interrupts the shutdown under way.
      gateway.app.log.info({ signal }, 'already shutting down');
      return;
    }
    stopping = true;
    gateway.app.log.info({ signal }, 'shutting down');
    const boundMs = config.shutdownGraceMs + SHUTDOWN_SLACK_MS;
    setTimeout(() => {
      gateway.app.log.error(
        { code: 'TG_SHUTDOWN_FORCED', boundMs },
        `shutdown did not finish within ${boundMs} ms (TOOLGATE_SHUTDOWN_GRACE_MS + ${SHUTDOWN_SLACK_MS} ms); exiting now`,
      );
      process.exit(1);
    }, boundMs).unref();
    gateway.close().then(
      () => process.exit(0),
      (error: unknown) => {
        gateway.app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // Installed before listening: a signal that arrives while starting up still shuts down cleanly.
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => {
    gateway
      .reloadCatalog()
      .catch((error: unknown) => gateway.app.log.error({ err: error }, 'catalog reload failed'));
  });
  const first = await gateway.bootstrap();
  // Printed before listening: bootstrap happens once, so a failure to listen must not swallow the
  // only copy of the key and password. It goes to stdout, never through the logger: logs are shipped.
  if (first.key !== undefined || first.adminPassword !== undefined) {
    process.stdout.write(
      `\nToolgate is ready at ${config.baseUrl}/mcp/\n\n` +
        (first.key === undefined
          ? ''
          : `Your first API key (solo), shown only this once. Store it now:\n  ${first.key}\n\n` +
            `Paste this into your MCP client's configuration:\n${JSON.stringify(mcpServersConfig(config.baseUrl, first.key, 'solo'))}\n\n`) +
        (first.adminPassword === undefined
          ? ''
          : `Dashboard: ${config.baseUrl}/dashboard  admin password: ${first.adminPassword}\n` +
            '(shown only this once; change it with `toolgate admin set-password`)\n\n'),
    );
  }
  await gateway.listen();
}

async function keysCommand(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'create') {
    const { values } = parseArgs({
      args: rest,
      options: { client: { type: 'string' }, type: { type: 'string' } },
    });
    const client = values.client?.trim();
    if (!client) throw new UsageError('keys create needs --client NAME');
    if (!KEY_TYPES.includes(values.type as KeyType))
      throw new UsageError('keys create needs --type solo, client or platform');
    const type = values.type as KeyType;
    const { key, record } = await withKeys(config, (keys) => keys.create(client, type));
    process.stdout.write(
      `Created ${record.id} for client "${record.clientName}" (${type} key). Copy the key now: it is not shown again.\n\n` +
        `${key}\n\nMCP client configuration:\n${JSON.stringify(mcpServersConfig(config.baseUrl, key, type))}\n`,
    );
    return;
  }
  if (sub === 'list') {
    const records = await withKeys(config, (keys) => keys.list());
    for (const r of records) {
      const status = r.revokedAt === null ? 'active' : `revoked ${r.revokedAt}`;
      process.stdout.write(
        `${r.id}\tclient=${r.clientName}\ttype=${r.type}\tcreated=${r.createdAt}\tlast_used=${r.lastUsedAt ?? 'never'}\tstatus=${status}\thint=${r.hint}\n`,
      );
    }
    if (records.length === 0)
      process.stdout.write('No keys yet. Create one with: toolgate keys create --client NAME --type solo\n');
    return;
  }
  if (sub === 'revoke') {
    const id = rest[0];
    if (!id) throw new UsageError('keys revoke needs the key id (see toolgate keys list)');
    const revoked = await withKeys(config, (keys) => keys.revoke(id));
    if (!revoked) {
      process.stderr.write(`No active key ${id}: it does not exist or was revoked already.\n`);
      process.exitCode = 1;
      return;
    }
    process.stdout.write(`Revoked ${id}. Requests with it are refused from now on, also on open sessions.\n`);
    return;
  }
  throw new UsageError(`Unknown keys command: ${sub ?? '(none)'}`);
}

async function reportsCommand(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'list') throw new UsageError(`Unknown reports command: ${sub ?? '(none)'}`);
  const { values } = parseArgs({ args: rest, options: { status: { type: 'string' } } });
  if (values.status !== undefined && values.status !== 'open' && values.status !== 'resolved') {
    throw new UsageError('--status is open or resolved');
  }
  const core = await openCore(config);
  try {
    const reports = await core.store.reports.list(values.status ? { status: values.status } : {});
    for (const r of reports) {
      const scope = [
        `client=${r.scope.clientId}`,
        r.scope.orgId !== null ? `org_id=${r.scope.orgId}` : '',
        r.scope.userId !== null ? `user_id=${r.scope.userId}` : '',
      ]
        .filter(Boolean)
        .join(' ');
      const about = [r.provider && `provider=${r.provider}`, r.tool && `tool=${r.tool}`]
        .filter(Boolean)
        .join(' ');
      process.stdout.write(
        `${r.id}\t${r.createdAt}\t${r.resolvedAt === null ? 'open' : 'resolved'}\t${scope}${about ? `\t${about}` : ''}\t${r.summary}\n`,
      );
      if (r.details) process.stdout.write(`\t${r.details.replace(/\n/g, '\n\t')}\n`);
    }
    if (reports.length === 0) process.stdout.write('No problem reports.\n');
  } finally {
    await core.close();
  }
}

const AUDIT_OPTIONS = {
  since: { type: 'string' },
  until: { type: 'string' },
  client: { type: 'string' },
  org: { type: 'string' },
  user: { type: 'string' },
  provider: { type: 'string' },
  outcome: { type: 'string' },
  event: { type: 'string' },
  limit: { type: 'string' },
} as const;

async function auditCommand(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'list' && sub !== 'export') throw new UsageError(`Unknown audit command: ${sub ?? '(none)'}`);
  const { values } = parseArgs({ args: rest, options: AUDIT_OPTIONS });
  let filter;
  try {
    filter = sub === 'export' ? auditFilter(values, MAX_AUDIT_LIMIT) : auditFilter(values);
  } catch (error) {
    if (error instanceof InputError) throw new UsageError(error.message);
    throw error;
  }
  const core = await openCore(config);
  try {
    const records = await core.store.audit.list(filter);
    if (sub === 'export') {
      for (const record of records) process.stdout.write(`${auditJsonLine(record)}\n`);
    } else if (records.length === 0) {
      process.stdout.write('No audit entries match.\n');
    } else {
      process.stdout.write(`${auditTable(records)}\n`);
    }
  } finally {
    await core.close();
  }
}

async function catalogCommand(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'validate') {
    const dir = resolve(rest[0] ?? config.manifestsDir);
    const registry = new PluginRegistry();
    for (const plugin of PLUGINS) registry.register(plugin);
    const findings = await validateCatalogDir(dir, registry, config.catalogBuild);
    if (findings.length > 0) process.stdout.write(`${formatFindings(findings)}\n`);
    const errors = findings.filter((f) => f.severity === 'error').length;
    process.stdout.write(`${errors} error(s), ${findings.length - errors} warning(s) in ${dir}\n`);
    if (hasErrors(findings)) process.exitCode = 1;
    return;
  }
  if (sub === 'reload') {
    const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${config.port}/admin/catalog/reload`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken(config)}` },
      });
    } catch {
      throw new Error(
        `No gateway answers at ${url}. Start it with \`toolgate serve\` (it loads the catalog at start), or check TOOLGATE_HOST/TOOLGATE_PORT.`,
      );
    }
    const body = (await response.json()) as CatalogReport & { error?: { message: string } };
    if (!response.ok) throw new Error(body.error?.message ?? `The gateway answered HTTP ${response.status}`);
    const list = (label: string, ids: string[]): string =>
      ids.length > 0 ? `${label}: ${ids.join(', ')}\n` : '';
    process.stdout.write(
      `Catalog version ${body.version}${body.swapped ? '' : ' (unchanged)'}\n` +
        list('added', body.added) +
        list('changed', body.changed) +
        list('removed', body.removed) +
        list('failing, last good version kept', body.keptOld) +
        list('failed', body.failed),
    );
    const findings = Object.values(body.findings).flat();
    if (findings.length > 0) process.stdout.write(`${formatFindings(findings)}\n`);
    if (hasErrors(findings)) process.exitCode = 1;
    return;
  }
  throw new UsageError(`Unknown catalog command: ${sub ?? '(none)'}`);
}

async function providerCommand(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'add') throw new UsageError(`Unknown provider command: ${sub ?? '(none)'}`);
  const { values } = parseArgs({
    args: rest,
    options: {
      openapi: { type: 'string' },
      id: { type: 'string' },
      operations: { type: 'string' },
      manifests: { type: 'string' },
      force: { type: 'boolean' },
    },
  });
  if (!values.openapi) throw new UsageError('provider add needs --openapi FILE_OR_URL, the OpenAPI document');
  if (!values.id) throw new UsageError('provider add needs --id ID, the new provider id (e.g. acme-crm)');
  const { addProvider, formatProviderAdd } = await import('../core/admin/provider-add.js');
  const result = await addProvider({
    config,
    registry: new PluginRegistry(PLUGINS),
    openapi: values.openapi,
    id: values.id,
    ...(values.operations !== undefined ? { operations: values.operations } : {}),
    manifestsDir: values.manifests ?? config.manifestsDir,
    force: values.force === true,
  });
  process.stdout.write(formatProviderAdd(result));
  if (hasErrors(result.findings)) process.exitCode = 1;
}

/** A secret from `variable` or the first line of standard input: never argv (shell history, ps). */
async function readSecret(variable: string, what: string): Promise<string> {
  const fromEnv = process.env[variable];
  if (fromEnv) return fromEnv;
  if (process.stdin.isTTY) throw new UsageError(`pipe ${what} on standard input, or set ${variable}`);
  let input = '';
  for await (const chunk of process.stdin) input += (chunk as Buffer).toString();
  const secret = input.split(/\r?\n/, 1)[0]!;
  if (secret.trim() === '') throw new UsageError(`${what} on standard input is empty`);
  return secret;
}

async function oauthAppCommand(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const core = await openCore(config);
  try {
    const apps = new OAuthApps(core.store, core.keyring, config, core.audit);
    if (sub === 'list') {
      const records = await core.store.oauthApps.list();
      const clients = new Map((await core.store.keys.listClients()).map((c) => [c.id, c.name]));
      for (const app of records) {
        const owner =
          app.clientId === null
            ? 'operator default'
            : `client=${clients.get(app.clientId) ?? app.clientId} org_id=${app.orgId ?? ''}`;
        process.stdout.write(
          `${app.id}\t${app.provider}\t${owner}\tclient_id=${app.oauthClientId}\tcreated=${app.createdAt}\t${app.supersededAt === null ? 'current' : `superseded ${app.supersededAt}`}${app.branding?.displayName ? `\tbranding=${app.branding.displayName}` : ''}\n`,
        );
      }
      if (records.length === 0)
        process.stdout.write(
          'No OAuth apps stored (apps may also come from TOOLGATE_PROVIDER_<ID>_CLIENT_ID/_CLIENT_SECRET).\n',
        );
      return;
    }
    if (sub !== 'set') throw new UsageError(`Unknown oauth-app command: ${sub ?? '(none)'}`);
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        'client-id': { type: 'string' },
        org: { type: 'string' },
        client: { type: 'string' },
        name: { type: 'string' },
        logo: { type: 'string' },
        accent: { type: 'string' },
      },
    });
    const provider = positionals[0];
    if (!provider || !/^[a-z][a-z0-9-]{1,30}$/.test(provider))
      throw new UsageError('oauth-app set needs the provider id');
    const oauthClientId = values['client-id']?.trim();
    if (!oauthClientId) throw new UsageError('oauth-app set needs --client-id');
    if ((values.org === undefined) !== (values.client === undefined))
      throw new UsageError('--org and --client go together (an organization of a client)');
    if (values.accent !== undefined && !/^#[0-9a-fA-F]{6}$/.test(values.accent))
      throw new UsageError('--accent is a colour like #1a73e8');
    if (values.logo !== undefined && !/^https:\/\//.test(values.logo))
      throw new UsageError('--logo is an https:// URL');
    let owner: { clientId: string; orgId: string } | null = null;
    if (values.client !== undefined && values.org !== undefined) {
      const client = await core.store.keys.findClient(values.client);
      if (!client) throw new UsageError(`No client named "${values.client}" (see toolgate keys list)`);
      owner = { clientId: client.id, orgId: values.org };
    }
    const branding = {
      ...(values.name !== undefined ? { displayName: values.name } : {}),
      ...(values.logo !== undefined ? { logoUrl: values.logo } : {}),
      ...(values.accent !== undefined ? { accentColor: values.accent } : {}),
    };
    const id = await apps.set(
      provider,
      owner,
      {
        clientId: oauthClientId,
        clientSecret: (await readSecret('TOOLGATE_OAUTH_CLIENT_SECRET', 'the client secret')).trim(),
      },
      Object.keys(branding).length > 0 ? branding : null,
    );
    process.stdout.write(
      `Stored ${id}: the ${owner ? `OAuth app of organization ${owner.orgId}` : 'default OAuth app'} for ${provider}. ` +
        `Its redirect URI is ${config.baseUrl}/oauth/callback. Existing connections keep refreshing with the app that minted them.\n`,
    );
  } finally {
    await core.close();
  }
}

/** The catalog the policy entries are checked against: the manifests dir, loaded as the server loads it. */
async function loadCatalog(config: Config): Promise<CatalogHolder> {
  const registry = new PluginRegistry();
  for (const plugin of PLUGINS) registry.register(plugin);
  const catalog = new CatalogHolder({ dir: config.manifestsDir, registry, limits: config.catalogBuild });
  await catalog.reload();
  return catalog;
}

function policyText(policy: PolicyView, clientName: string): string {
  const list = (entries: string[] | null, none: string): string =>
    entries?.length ? entries.join(', ') : none;
  return (
    `client ${clientName}${policy.orgId === null ? '' : ` org_id ${policy.orgId}`}` +
    `${policy.updatedAt === null ? ' (no policy set: the default)' : ` (updated ${policy.updatedAt})`}\n` +
    `surface: ${policy.surface}\n` +
    `allow: ${list(policy.allow, 'every tool')}\n` +
    `deny: ${list(policy.deny, 'nothing')}\n`
  );
}

async function policyCommand(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'set' && sub !== 'show' && sub !== 'clear')
    throw new UsageError(`Unknown policy command: ${sub ?? '(none)'}`);
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      org: { type: 'string' },
      ...(sub === 'set'
        ? { surface: { type: 'string' }, allow: { type: 'string' }, deny: { type: 'string' } }
        : {}),
    },
  });
  if (positionals.length !== 1) throw new UsageError(`policy ${sub} needs the client name`);
  const core = await openCore(config);
  try {
    const policies = new PolicyOperations({
      store: core.store,
      catalog: await loadCatalog(config),
      bus: core.coordination.bus,
    });
    const owner = await policies.owner(positionals[0], values.org);
    if (sub === 'clear') {
      const cleared = await policies.clear(owner);
      process.stdout.write(cleared ? 'Policy removed: every tool, surface auto.\n' : 'No policy was set.\n');
      return;
    }
    const policy =
      sub === 'set'
        ? await policies.set(owner, { surface: values.surface, allow: values.allow, deny: values.deny })
        : await policies.get(owner);
    process.stdout.write(policyText(policy, owner.clientName));
  } finally {
    await core.close();
  }
}

/** The client secret of `idp set`: from a file or a variable, never the command line. */
function idpSecret(values: { 'client-secret-file'?: string; 'client-secret-env'?: string }): string {
  const file = values['client-secret-file'];
  const variable = values['client-secret-env'];
  if ((file === undefined) === (variable === undefined))
    throw new UsageError(
      'idp set needs the client secret: --client-secret-file FILE or --client-secret-env VAR',
    );
  if (file !== undefined) return readFileSync(file, 'utf8').split(/\r?\n/, 1)[0]!;
  const value = process.env[variable!];
  if (value === undefined || value.trim() === '') throw new UsageError(`${variable} is not set`);
  return value;
}

async function idpCommand(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'set' && sub !== 'list' && sub !== 'remove')
    throw new UsageError(`Unknown idp command: ${sub ?? '(none)'}`);
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: sub === 'remove',
    options: {
      key: { type: 'string' },
      name: { type: 'string' },
      issuer: { type: 'string' },
      'client-id': { type: 'string' },
      'client-secret-file': { type: 'string' },
      'client-secret-env': { type: 'string' },
      'user-claim': { type: 'string' },
      'org-claim': { type: 'string' },
      'display-name': { type: 'string' },
    },
  });
  if (sub === 'remove' && positionals.length !== 1) throw new UsageError('idp remove needs the sign-in name');
  const secret = sub === 'set' ? idpSecret(values) : undefined;
  const core = await openCore(config);
  try {
    const idps = new IdentityProviderOperations({ config, store: core.store, keyring: core.keyring });
    if (sub === 'list') {
      const all = await idps.list();
      for (const idp of all) {
        process.stdout.write(
          `${idp.name}\tkey=${idp.keyId}\tclient=${idp.clientName}\tissuer=${idp.issuer}\tclient_id=${idp.oauthClientId}\tuser_id=${idp.userClaim}${idp.orgClaim === null ? '' : `\torg_id=${idp.orgClaim}`}\tdisplay_name=${idp.displayName}\n`,
        );
      }
      if (all.length === 0) process.stdout.write('No identity providers.\n');
      return;
    }
    if (sub === 'remove') {
      const removed = await idps.remove(positionals[0]);
      process.stdout.write(`Removed ${removed.name} (key ${removed.keyId}): sign-ins through it end.\n`);
      return;
    }
    const idp = await idps.set({
      key: values.key,
      name: values.name,
      issuer: values.issuer,
      client_id: values['client-id'],
      client_secret: secret,
      user_claim: values['user-claim'],
      org_claim: values['org-claim'],
      display_name: values['display-name'],
    });
    process.stdout.write(
      `Stored ${idp.name} for key ${idp.keyId} (${idp.clientName}): user_id from ${idp.userClaim}${idp.orgClaim === null ? '' : `, org_id from ${idp.orgClaim}`}. ` +
        `Register ${idps.redirectUri} as its redirect URI; people type “${idp.name}” on the sign-in page.\n`,
    );
  } finally {
    await core.close();
  }
}

async function adminCommand(config: Config, args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'set-password') throw new UsageError(`Unknown admin command: ${sub ?? '(none)'}`);
  if (rest.length > 0)
    throw new UsageError(
      'admin set-password takes no arguments: pipe the password on standard input or set TOOLGATE_ADMIN_PASSWORD (a password on the command line would stay in the shell history)',
    );
  const password = await readSecret('TOOLGATE_ADMIN_PASSWORD', 'the new admin password');
  if (password.length < MIN_PASSWORD_LENGTH)
    throw new UsageError(`the admin password needs at least ${MIN_PASSWORD_LENGTH} characters`);
  const core = await openCore(config);
  try {
    await core.store.dashboard.setPasswordHash(await hashPassword(password), { onlyIfUnset: false });
  } finally {
    await core.close();
  }
  process.stdout.write(
    `The dashboard admin password is set, and every dashboard session is signed out. Sign in at ${config.baseUrl}/dashboard\n`,
  );
}

async function rotateCommand(config: Config): Promise<void> {
  const core = await openCore(config);
  try {
    const rotation = await rotateMasterKey(config, core.store, core.keyring);
    if (rotation.file) {
      process.stdout.write(
        `Re-encrypted ${rotation.resealed} stored secret(s) under a new master key, written to ${rotation.file}.\n` +
          'Back that file up now, apart from the database: the previous key no longer opens anything. ' +
          'A running server picks the new key up by itself; API keys keep working.\n',
      );
    } else {
      // The key lives in the environment: the operator must set the new one before the next start.
      process.stdout.write(
        `Re-encrypted ${rotation.resealed} stored secret(s) under a new master key. Set it now, in place of the old one, and restart:\n\n` +
          `TOOLGATE_MASTER_KEY=${rotation.key}\n\nIt is shown only this once. API keys keep working.\n`,
      );
    }
  } finally {
    await core.close();
  }
}

/**
 * The master key of the deployment in `source`'s data dir, found as its gateway finds it
 * (TOOLGATE_MASTER_KEY, else master.key there), but never generated: a new key would open nothing.
 */
function sourceMasterKey(source: Config): Buffer {
  if (source.masterKey === undefined && !existsSync(masterKeyFile(source)))
    throw new Error(`TOOLGATE_MASTER_KEY is unset and there is no ${masterKeyFile(source)}`);
  return loadMasterKey(source).key;
}

async function storeCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'migrate') throw new UsageError(`Unknown store command: ${sub ?? '(none)'}`);
  const { values } = parseArgs({ args: rest, options: { from: { type: 'string' }, to: { type: 'string' } } });
  if (!values.from)
    throw new UsageError('store migrate needs --from DIR, the data dir of the SQLite deployment');
  if (!values.to)
    throw new UsageError('store migrate needs --to postgres://USER:PASSWORD@HOST:5432/DATABASE');
  // The deployment to move as its gateway saw it: the database and master key of its data dir.
  const source = loadConfig({ ...process.env, TOOLGATE_DATA_DIR: values.from, TOOLGATE_DATABASE_URL: '' });
  const report = await transferStore({
    from: source.databaseUrl.slice('sqlite:'.length),
    to: values.to,
    openHashSecret: (secret) =>
      void new Keyring(sourceMasterKey(source)).open(secret.sealed, ...hashSecretBinding(secret.version)),
    onProgress: ({ table, done, total }) => process.stdout.write(`${table}: ${done}/${total} rows\n`),
  });
  process.stdout.write(`\n${formatTransfer(report)}\n`);
  if (!report.ok) {
    process.exitCode = 1;
    return;
  }
  // Where a gateway process finds the key (keyring.ts): TOOLGATE_MASTER_KEY, else its own data dir's
  // master.key, generated when absent (and then it refuses to start: it opens none of the moved secrets).
  const keyFile = masterKeyFile(source);
  const key =
    source.masterKey !== undefined
      ? '       TOOLGATE_MASTER_KEY    the value the old gateway had (set now too): unchanged\n'
      : `       TOOLGATE_MASTER_KEY    the old gateway's key, kept in ${keyFile}: TOOLGATE_MASTER_KEY="$(cat ${keyFile})"\n` +
        "     (or copy that file into each process's TOOLGATE_DATA_DIR instead). A process that finds neither\n" +
        '     generates a new key and refuses to start ("Sealed with another master key").\n';
  process.stdout.write(
    '\nNext:\n' +
      `  1. Keep the old gateway stopped. ${source.dataDir} was only read: keep it, and its master key, as a backup.\n` +
      '  2. Start every gateway process with:\n' +
      `       TOOLGATE_DATABASE_URL  the --to URL (${redactedUrl(values.to)})\n` +
      '       TOOLGATE_REDIS_URL     redis://HOST:6379, one Redis for all of them (PostgreSQL needs it)\n' +
      key +
      '  3. API keys, connections, OAuth apps and the dashboard password work as before.\n',
  );
}

async function main(argv: string[]): Promise<void> {
  const [command = 'serve', ...rest] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = loadConfig();
  switch (command) {
    case 'serve':
      return serve(config);
    case 'keys':
      return keysCommand(config, rest);
    case 'reports':
      return reportsCommand(config, rest);
    case 'audit':
      return auditCommand(config, rest);
    case 'catalog':
      return catalogCommand(config, rest);
    case 'provider':
      return providerCommand(config, rest);
    case 'oauth-app':
      return oauthAppCommand(config, rest);
    case 'policy':
      return policyCommand(config, rest);
    case 'idp':
      return idpCommand(config, rest);
    case 'admin':
      return adminCommand(config, rest);
    case 'store':
      return storeCommand(rest);
    case 'master-key':
      if (rest[0] !== 'rotate') throw new UsageError(`Unknown master-key command: ${rest[0] ?? '(none)'}`);
      return rotateCommand(config);
    default:
      throw new UsageError(`Unknown command: ${command}`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof ConfigError) {
    process.stderr.write(`toolgate: ${error.message}\n\n${error instanceof UsageError ? USAGE + '\n' : ''}`);
    process.exit(2);
  }
  process.stderr.write(`toolgate: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
