import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';

const base = { TOOLGATE_DATA_DIR: '/tmp/toolgate-config-test' };

describe('loadConfig: the store and coordination settings', () => {
  it('defaults to the embedded SQLite store in the data dir and one process (no Redis)', () => {
    const config = loadConfig(base);
    expect(config.databaseUrl).toBe('sqlite:/tmp/toolgate-config-test/toolgate.db');
    expect(config.redisUrl).toBeUndefined();
    expect(config.redisPrefix).toBe('toolgate:');
  });

  it('takes PostgreSQL together with Redis', () => {
    const config = loadConfig({
      ...base,
      TOOLGATE_DATABASE_URL: 'postgres://toolgate@db:5432/toolgate',
      TOOLGATE_REDIS_URL: 'redis://cache:6379',
      TOOLGATE_REDIS_PREFIX: 'tg-eu:',
    });
    expect(config.databaseUrl).toBe('postgres://toolgate@db:5432/toolgate');
    expect(config.redisUrl).toBe('redis://cache:6379');
    expect(config.redisPrefix).toBe('tg-eu:');
  });

  it('refuses PostgreSQL without Redis, saying what to set', () => {
    expect(() => loadConfig({ ...base, TOOLGATE_DATABASE_URL: 'postgresql://db/toolgate' })).toThrow(
      /set TOOLGATE_REDIS_URL too/,
    );
  });

  it('takes an admin token shared by every process only when it is long enough', () => {
    const token = 'k'.repeat(43);
    expect(loadConfig({ ...base, TOOLGATE_ADMIN_TOKEN: token }).adminToken).toBe(token);
    expect(loadConfig(base).adminToken).toBeUndefined();
    expect(() => loadConfig({ ...base, TOOLGATE_ADMIN_TOKEN: 'short' })).toThrow(
      /TOOLGATE_ADMIN_TOKEN must be at least 32/,
    );
    expect(() => loadConfig({ ...base, TOOLGATE_ADMIN_TOKEN: `${token} x` })).toThrow(/TOOLGATE_ADMIN_TOKEN/);
  });

  it('refuses other databases and a Redis URL of another scheme', () => {
    expect(() => loadConfig({ ...base, TOOLGATE_DATABASE_URL: 'mysql://db/toolgate' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, TOOLGATE_REDIS_URL: 'http://cache:6379' })).toThrow(
      /redis:\/\/ or rediss:\/\//,
    );
  });
});

describe('loadConfig: the metrics port', () => {
  it('serves /metrics on the main port (admin token) unless TOOLGATE_METRICS_PORT names another', () => {
    expect(loadConfig(base).metricsPort).toBeUndefined();
    expect(loadConfig({ ...base, TOOLGATE_METRICS_PORT: '' }).metricsPort).toBeUndefined();
    expect(loadConfig({ ...base, TOOLGATE_METRICS_PORT: '9464' }).metricsPort).toBe(9464);
  });

  it('refuses a port that is not one, or the main port itself, saying what to do', () => {
    expect(() => loadConfig({ ...base, TOOLGATE_METRICS_PORT: 'metrics' })).toThrow(
      /TOOLGATE_METRICS_PORT must be an integer from 0 to 65535/,
    );
    expect(() => loadConfig({ ...base, TOOLGATE_PORT: '9464', TOOLGATE_METRICS_PORT: '9464' })).toThrow(
      /TOOLGATE_METRICS_PORT must differ from TOOLGATE_PORT.*unset it/,
    );
  });
});

describe('loadConfig: the audit trail', () => {
  it('records by default for 30 days, and takes off/on and a number of days', () => {
    expect(loadConfig(base)).toMatchObject({ audit: true, auditDays: 30 });
    expect(loadConfig({ ...base, TOOLGATE_AUDIT: 'off', TOOLGATE_AUDIT_DAYS: '400' })).toMatchObject({
      audit: false,
      auditDays: 400,
    });
    expect(loadConfig({ ...base, TOOLGATE_AUDIT: 'on' }).audit).toBe(true);
    expect(() => loadConfig({ ...base, TOOLGATE_AUDIT: 'sometimes' })).toThrow(
      'TOOLGATE_AUDIT must be 1 or 0 (on or off), got "sometimes"',
    );
    expect(() => loadConfig({ ...base, TOOLGATE_AUDIT_DAYS: '0' })).toThrow(
      'TOOLGATE_AUDIT_DAYS must be an integer from 1 to 3650, got "0"',
    );
    expect(loadConfig(base).auditFlushMs).toBe(1_000);
    expect(loadConfig({ ...base, TOOLGATE_AUDIT_FLUSH_MS: '250' }).auditFlushMs).toBe(250);
    expect(() => loadConfig({ ...base, TOOLGATE_AUDIT_FLUSH_MS: '99' })).toThrow(
      'TOOLGATE_AUDIT_FLUSH_MS must be an integer from 100 to 60000, got "99"',
    );
  });
});
