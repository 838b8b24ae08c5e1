import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { GatewayError } from '../errors.js';
import type { Gateway } from '../gateway.js';

/**
 * The admin API, for operators' tools on the same machine (the `toolgate` command). It is
 * authenticated by a token kept in the data dir (mode 0600): whoever can read the data dir is the
 * operator already. The dashboard's pages call the same operations.
 */
export function adminTokenFile(config: Config): string {
  return join(config.dataDir, 'admin.token');
}

/** Reads the admin token, creating it on first use. */
export function adminToken(config: Config): string {
  const file = adminTokenFile(config);
  if (!existsSync(file)) {
    try {
      writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      // Another process created it first: use theirs.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return readFileSync(file, 'utf8').trim();
}

function guard(token: string): (request: FastifyRequest) => void {
  const expected = Buffer.from(token);
  return (request) => {
    const match = /^bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    const given = Buffer.from(match?.[1] ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new GatewayError('TG_ERR_ADMIN_UNAUTHORIZED');
    }
  };
}

export function adminRoutes(app: FastifyInstance, gateway: Gateway): void {
  const check = guard(adminToken(gateway.config));
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
      admin.post('/catalog/reload', () => gateway.reloadCatalog());
      done();
    },
    { prefix: '/admin' },
  );
}
