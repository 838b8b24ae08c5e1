import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runToolgate, startServe } from '../../helpers/cli.js';
import { connect, SYSTEM_TOOLS } from '../../helpers/clients.js';
import { freePort } from '../../helpers/gateway.js';

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'toolgate-cli-'));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

describe('toolgate serve on an empty data dir', () => {
  it('prints the first key and a working client config once, outside the logger, and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const env = { TOOLGATE_DATA_DIR: dataDir, TOOLGATE_PORT: String(port) };
    const first = await startServe(env);
    const banner = first.output();
    const config = banner.split('\n').find((line) => line.startsWith('{"mcpServers"'));
    expect(config).toBeDefined();
    const entry = (
      JSON.parse(config!) as { mcpServers: { toolgate: { url: string; headers: Record<string, string> } } }
    ).mcpServers.toolgate;
    expect(entry.url).toBe(`http://localhost:${port}/mcp/`);
    expect(entry.headers['X-API-Key']).toMatch(/^toolgate_[0-9A-Za-z]{49}$/);
    // The banner is plain text on stdout; no log line (JSON) carries the key.
    const logLines = banner.split('\n').filter((line) => line.startsWith('{"level"'));
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) expect(line).not.toContain(entry.headers['X-API-Key']);
    expect(banner).toContain('master.key');
    expect(statSync(join(dataDir, 'master.key')).mode & 0o777).toBe(0o600);

    const client = await connect(
      '2025 (v1 client)',
      new URL(entry.url.replace('localhost', '127.0.0.1')),
      entry.headers,
    );
    expect(await client.listToolNames()).toEqual(SYSTEM_TOOLS);
    await client.close();
    // SIGHUP reloads the catalog (the bundled manifests) without a restart.
    const loads = () =>
      first
        .output()
        .split('\n')
        .filter((line) => line.includes('"code":"TG_CATALOG_LOADED"')).length;
    const before = loads();
    const reloaded = new Promise<void>((resolve) => {
      const check = (): void => {
        if (loads() > before) resolve();
        else first.child.stdout!.once('data', check);
      };
      check();
    });
    first.child.kill('SIGHUP');
    await reloaded;
    expect(first.output()).toMatch(/"code":"TG_CATALOG_LOADED","trigger":"request"/);
    expect(await first.stop()).toBe(0);

    const second = await startServe(env);
    expect(second.output()).not.toContain('mcpServers');
    expect(second.output()).not.toContain('master.key');
    expect(await second.stop()).toBe(0);
  });
});

describe('toolgate keys', () => {
  it('creates (printing the key once), lists without the key, and revokes', async () => {
    const env = { TOOLGATE_DATA_DIR: dataDir };
    const created = await runToolgate(['keys', 'create', '--client', 'acme', '--type', 'platform'], env);
    expect(created.code).toBe(0);
    const key = /toolgate_[0-9A-Za-z]{49}/.exec(created.stdout)?.[0];
    expect(key).toBeDefined();
    expect(created.stdout).toContain('?org_id=ORG_ID&user_id=USER_ID');
    const id = /key_[0-9a-f]{16}/.exec(created.stdout)![0];

    const listed = await runToolgate(['keys', 'list'], env);
    expect(listed.stdout.startsWith(id)).toBe(true);
    expect(listed.stdout).toContain('client=acme\ttype=platform');
    expect(listed.stdout).toContain('status=active');
    expect(listed.stdout).not.toContain(key!);

    expect((await runToolgate(['keys', 'revoke', id], env)).code).toBe(0);
    expect((await runToolgate(['keys', 'list'], env)).stdout).toMatch(/status=revoked/);
    const again = await runToolgate(['keys', 'revoke', id], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('revoked already');
  });

  it('explains bad usage with exit code 2', async () => {
    const bad = await runToolgate(['keys', 'create', '--client', 'acme', '--type', 'gold'], {
      TOOLGATE_DATA_DIR: dataDir,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--type solo, client or platform');
    const badEnv = await runToolgate(['keys', 'list'], {
      TOOLGATE_DATA_DIR: dataDir,
      TOOLGATE_PORT: 'eighty',
    });
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toContain('TOOLGATE_PORT');
  });
});
