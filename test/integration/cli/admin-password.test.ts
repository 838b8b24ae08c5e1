import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runToolgate, startServe } from '../../helpers/cli.js';
import { freePort } from '../../helpers/gateway.js';

let dataDir: string;
let port: number;
let env: Record<string, string>;
beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'toolgate-admin-'));
  port = await freePort();
  env = { TOOLGATE_DATA_DIR: dataDir, TOOLGATE_PORT: String(port) };
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

/** Whether `password` signs in to the running gateway's dashboard. */
async function signsIn(password: string): Promise<boolean> {
  const base = `http://127.0.0.1:${port}/dashboard`;
  const form = await fetch(`${base}/sign-in`);
  const cookie = form.headers.getSetCookie()[0]!.split(';')[0]!;
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const posted = await fetch(`${base}/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: token, password }).toString(),
  });
  return posted.status === 303;
}

describe('the dashboard admin password', () => {
  it('is generated on first start, printed once in the banner (never logged), and signs in', async () => {
    const first = await startServe(env);
    try {
      const line = first
        .output()
        .split('\n')
        .find((l) => l.startsWith('Dashboard: '));
      expect(line).toMatch(
        new RegExp(`^Dashboard: http://localhost:${port}/dashboard {2}admin password: [A-Za-z0-9_-]{24}$`),
      );
      const password = line!.split('admin password: ')[1]!;
      for (const log of first
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{"level"')))
        expect(log).not.toContain(password);
      expect(await signsIn(password)).toBe(true);
      expect(await signsIn(`${password}x`)).toBe(false);
    } finally {
      await first.stop();
    }
    const second = await startServe(env);
    await second.stop();
    expect(second.output()).not.toContain('admin password');
  });

  it('is set with `toolgate admin set-password` from standard input or the environment, never argv', async () => {
    const piped = await runToolgate(['admin', 'set-password'], env, 'correct horse battery staple\n');
    expect(piped.code).toBe(0);
    expect(piped.stdout).toContain('The dashboard admin password is set');
    // A password already set is neither replaced nor printed by the first start.
    const server = await startServe(env);
    try {
      expect(server.output()).not.toContain('admin password:');
      expect(await signsIn('correct horse battery staple')).toBe(true);

      // The running server takes a password set by the CLI at once.
      const fromEnv = await runToolgate(['admin', 'set-password'], {
        ...env,
        TOOLGATE_ADMIN_PASSWORD: 'another long passphrase',
      });
      expect(fromEnv.code).toBe(0);
      expect(await signsIn('another long passphrase')).toBe(true);
      expect(await signsIn('correct horse battery staple')).toBe(false);
    } finally {
      await server.stop();
    }

    const short = await runToolgate(['admin', 'set-password'], env, 'short\n');
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('at least 12 characters');
    const argv = await runToolgate(['admin', 'set-password', 'on-the-command-line'], env);
    expect(argv.code).toBe(2);
    expect(argv.stderr).toContain('takes no arguments');
    const empty = await runToolgate(['admin', 'set-password'], env, '\n');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('empty');
  });
});
