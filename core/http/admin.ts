import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { GatewayError } from '../errors.js';
import type { AdminOperations, ProviderStatus } from '../admin/operations.js';

/**
 * The admin API, for operators' tools on the same machine (the `toolgate` command). It is
 * authenticated by a token kept in the data dir (mode 0600): whoever can read the data dir is the
 * operator already; or by TOOLGATE_ADMIN_TOKEN, which every process of a deployment is given, so
 * that the API answers alike behind a balancer. The dashboard's pages call the same operations.
 */
export function adminTokenFile(config: Config): string {
  return join(config.dataDir, 'admin.token');
}

/** TOOLGATE_ADMIN_TOKEN, else the data dir's token, created on first use. */
export function adminToken(config: Config): string {
  if (config.adminToken !== undefined) return config.adminToken;
  const file = adminTokenFile(config);
  if (!existsSync(file)) {
    // The keyring creates the data dir only when it generates a key; with TOOLGATE_MASTER_KEY set
    // and PostgreSQL, nothing else may have.
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    try {
      writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      // Another process created it first: use theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return readFileSync(file, 'utf8').trim();
}

/** Refuses (401) a request without `Authorization: Bearer <admin token>`; compared in constant time. */
export function adminGuard(token: string): (request: FastifyRequest) => void {
  const expected = Buffer.from(token);
  return (request) => {
    const match = /^bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    const given = Buffer.from(match?.[1] ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new GatewayError('TG_ERR_ADMIN_UNAUTHORIZED');
    }
  };
}

// A provider's status without its compiled tools and manifest (GET /admin/catalog/:id has those by
// category).
function providerSummary({ id, entry, state, findings }: ProviderStatus): Record<string, unknown> {
  return {
    id,
    state,
    ...(entry && {
      displayName: entry.displayName,
      authKind: entry.auth.kind,
      contentHash: entry.contentHash,
      tools: entry.tools.length,
      categories: entry.categories.length,
    }),
    findings,
  };
}

type Body = Record<string, unknown>;

function body(request: FastifyRequest): Body {
  return typeof request.body === 'object' && request.body !== null ? (request.body as Body) : {};
}

/**
 * `/admin/*`: JSON over the operations the dashboard's forms use (admin/operations.ts), for the
 * `toolgate` command and operators' scripts. README.md, "Admin API", lists every route.
 */
export function adminRoutes(app: FastifyInstance, config: Config, ops: AdminOperations): void {
  const check = adminGuard(adminToken(config));
  app.register(
    (admin, _options, done) => {
      admin.addHook('onRequest', (request, _reply, next) => {
        try {
          check(request);
          next();
        } catch (error) {
          next(error as Error);
        }
      });
      admin.get('/clients', () => ops.clients());
      admin.post('/clients', async (request, reply) =>
        reply.code(201).send(await ops.createClient(body(request).name)),
      );
      admin.get('/keys', () => ops.keys());
      admin.post('/keys', async (request, reply) => {
        const { client, type } = body(request);
        return reply.code(201).send(await ops.createKey(client, type));
      });
      admin.post<{ Params: { id: string } }>('/keys/:id/revoke', (request) =>
        ops.revokeKey(request.params.id),
      );
      admin.post('/keys/test', (request) => ops.testKey(body(request).key));
      admin.get<{ Querystring: { status?: string } }>('/reports', (request) =>
        ops.reports(request.query.status),
      );
      admin.get<{ Querystring: Record<string, string> }>('/audit', (request) => ops.audit(request.query));
      admin.post<{ Params: { id: string } }>('/reports/:id/resolve', async (request) => {
        await ops.resolveReport(request.params.id);
        return { id: request.params.id, resolved: true };
      });
      admin.get('/catalog', () => {
        const status = ops.catalog();
        return { ...status, providers: status.providers.map(providerSummary) };
      });
      admin.get<{ Params: { id: string } }>('/catalog/:id', (request) => {
        const status = ops.provider(request.params.id);
        const tools = new Map(status.entry?.tools.map((t) => [t.name, t]));
        return {
          ...providerSummary(status),
          categories: status.entry?.categories.map((c) => ({
            id: c.id,
            title: c.title,
            tools: c.tools.map((name) => ({ name, description: tools.get(name)?.description ?? '' })),
          })),
        };
      });
      admin.post('/catalog/reload', () => ops.reloadCatalog());
      admin.get('/organizations', () => ops.organizations());
      admin.get('/oauth-apps', () => ops.oauthApps());
      admin.put<{ Params: { provider: string } }>('/oauth-apps/:provider', async (request) => {
        const input = body(request);
        const owner = await ops.owner(input.client, input.org_id);
        return ops.setOAuthApp(owner, { ...input, provider: request.params.provider });
      });
      admin.get('/connections', () => ops.connections());
      // Identity providers people sign in through at the front door (issue 14); one per key.
      admin.get('/identity-providers', () => ops.identityProviders.list());
      admin.put<{ Params: { id: string } }>('/keys/:id/identity-provider', (request) =>
        ops.identityProviders.set({ ...body(request), key: request.params.id }),
      );
      admin.delete<{ Params: { name: string } }>('/identity-providers/:name', (request) =>
        ops.identityProviders.remove(request.params.name),
      );
      // A client's policy (org_id absent) or one of its organizations' (issue 15).
      admin.get<{ Querystring: { client?: string; org_id?: string } }>('/policies', async (request) =>
        ops.policies.get(await ops.policies.owner(request.query.client, request.query.org_id)),
      );
      admin.put('/policies', async (request) => {
        const input = body(request);
        return ops.policies.set(await ops.policies.owner(input.client, input.org_id), input);
      });
      admin.delete<{ Querystring: { client?: string; org_id?: string } }>('/policies', async (request) => ({
        cleared: await ops.policies.clear(
          await ops.policies.owner(request.query.client, request.query.org_id),
        ),
      }));
      done();
    },
    { prefix: '/admin' },
  );
}
