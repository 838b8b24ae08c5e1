import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../core/config.js';

const root = new URL('../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, root), 'utf8');

/** Every TOOLGATE_* name core/config.ts reads, and the per-provider pattern. */
const CONFIG_SOURCE = read('core/config.ts');
const known = (name: string): boolean =>
  name.startsWith('TOOLGATE_PROVIDER_') || new RegExp(`\\b${name}\\b`).test(CONFIG_SOURCE);

/** Compose's `${NAME:-default}` and `${NAME:?message}`, with the operator's values in `given`. */
function interpolate(value: string, given: Record<string, string>): string {
  return value.replace(
    /\$\{([A-Z_]+)(?::([-?])([^}]*))?\}/g,
    (_m, name: string, op?: string, rest?: string) => {
      const set = given[name];
      if (set !== undefined) return set;
      if (op === '-') return rest ?? '';
      throw new Error(`${name} is required: ${rest ?? ''}`);
    },
  );
}

interface Service {
  environment?: Record<string, string>;
}

const compose = parse(read('scripts/deploy/compose.yaml'), { merge: true }) as {
  services: Record<string, Service>;
};
const gateways = Object.entries(compose.services).filter(([name]) => name.startsWith('gateway-'));

describe('the deployment example (Dockerfile, scripts/deploy/compose.yaml)', () => {
  it('runs several gateway processes, each with settings config.ts accepts: PostgreSQL, Redis, one master key', () => {
    expect(gateways.length).toBeGreaterThanOrEqual(2);
    const masterKey = Buffer.alloc(32, 7).toString('base64');
    for (const [, service] of gateways) {
      const env = Object.fromEntries(
        Object.entries(service.environment ?? {}).map(([k, v]) => [
          k,
          interpolate(String(v), { TOOLGATE_MASTER_KEY: masterKey }),
        ]),
      );
      for (const name of Object.keys(env))
        expect(known(name), `${name} is not a setting of core/config.ts`).toBe(true);
      const config = loadConfig(env);
      expect(config.databaseUrl).toMatch(/^postgres:\/\//);
      expect(config.redisUrl).toMatch(/^redis:\/\//);
      expect(config.masterKey).toBe(masterKey);
    }
  });

  it('refuses to start without the shared master key', () => {
    const [, service] = gateways[0]!;
    expect(() => interpolate(String(service.environment?.TOOLGATE_MASTER_KEY), {})).toThrow(
      /TOOLGATE_MASTER_KEY/,
    );
  });

  it('sends traffic round robin to every gateway process, streams unbuffered', () => {
    const balancer = read('scripts/deploy/balancer.conf')
      .split('\n')
      .filter((line) => !line.trim().startsWith('#'))
      .join('\n');
    for (const [name] of gateways) expect(balancer).toContain(`server ${name}:8080;`);
    expect(balancer).not.toMatch(/\b(ip_hash|hash|sticky)\b/);
    expect(balancer).toContain('proxy_buffering off;');
  });

  it('builds an image whose settings are config.ts settings', () => {
    const dockerfile = read('Dockerfile');
    const names = [...dockerfile.matchAll(/\b(TOOLGATE_[A-Z_]+)=/g)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(known(name), `${name} is not a setting of core/config.ts`).toBe(true);
  });
});
