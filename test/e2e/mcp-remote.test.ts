import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser } from '../helpers/browser.js';
import { signInWithKey } from '../helpers/front-door.js';
import { freePort, startGateway, type TestGateway } from '../helpers/gateway.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const MCP_REMOTE = join(
  dirname(createRequire(import.meta.url).resolve('mcp-remote/package.json')),
  'dist/proxy.js',
);

let tg: TestGateway;
let browser: Awaited<ReturnType<typeof openBrowser>>;
/** Receives the URL mcp-remote's browser opener was asked to open. */
let opened: Receiver;
let home: string;
/** Every stdio client started: each closed (so its mcp-remote exits) in afterAll. */
const clients: Client[] = [];

beforeAll(async () => {
  const port = await freePort();
  tg = await startGateway({ TOOLGATE_PORT: String(port), TOOLGATE_BASE_URL: `http://127.0.0.1:${port}` });
  opened = await startReceiver();
  browser = await openBrowser();
  home = mkdtempSync(join(tmpdir(), 'toolgate-mcp-remote-'));
});
afterAll(async () => {
  // Closing a client ends its stdio transport: mcp-remote's stdin closes and it exits, awaited.
  await Promise.all(clients.map((client) => client.close()));
  await browser?.close();
  await opened?.close();
  await tg?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

/**
 * The browser mcp-remote opens: `open` runs xdg-open, which with no desktop session hands the URL to
 * $BROWSER. This one posts it to the test, which opens it in Chromium.
 */
function browserOpener(): string {
  const script = join(home, 'open-in-test-browser');
  writeFileSync(
    script,
    `#!/bin/sh\nexec "${process.execPath}" -e 'fetch(process.argv[1], { method: "POST", body: process.argv[2] }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "${opened.url}/opened" "$1"\n`,
  );
  chmodSync(script, 0o755);
  return script;
}

/**
 * Starts `mcp-remote <url> <callback port> --allow-http` under a stdio MCP client, as Claude
 * Desktop's config runs it, its state under the test's home; resolves once the client is connected.
 */
function startMcpRemote(): { connected: Promise<Client>; stderr: () => string } {
  let stderr = '';
  const connected = (async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_REMOTE, tg.mcpUrl().href, String(await freePort()), '--allow-http'],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        MCP_REMOTE_CONFIG_DIR: join(home, '.mcp-auth'),
        BROWSER: browserOpener(),
      },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'claude-desktop-stand-in', version: '1.0.0' });
    clients.push(client);
    await client.connect(transport);
    return client;
  })();
  return { connected, stderr: () => stderr };
}

/** Lists the tools through mcp-remote and calls one. */
async function listAndCall(client: Client, stderr: string): Promise<void> {
  const tools = (await client.listTools()).tools.map((t) => t.name);
  expect(tools, stderr).toContain('list_providers');
  const listed = await client.callTool({ name: 'list_providers', arguments: {} });
  expect(listed.isError, JSON.stringify(listed.content)).toBeFalsy();
}

describe('mcp-remote, as Claude Desktop runs it for a remote server, with no key header', () => {
  it('discovers the front door, registers, sends the person to sign in, then lists and calls tools', async () => {
    const { key } = await tg.key('client');
    const remote = startMcpRemote();

    const authorization = new URL((await opened.next()).body);
    expect(`${authorization.origin}${authorization.pathname}`).toBe(`${tg.url}/authorize`);
    expect(authorization.searchParams.get('client_id')).toMatch(/^tgc_/);
    const consent = await signInWithKey(browser.page, authorization, { key, userId: 'remote-user' });
    expect(consent).toContain('user remote-user');

    await listAndCall(await remote.connected, remote.stderr());
    // mcp-remote keeps what it registered and got under its config dir, for the next start.
    expect(readdirSync(join(home, '.mcp-auth'), { recursive: true }).join(' ')).toMatch(/tokens\.json/);
  });

  it('started again (Claude Desktop restarted), goes on with the tokens it kept: no browser opens', async () => {
    const remote = startMcpRemote();
    await listAndCall(await remote.connected, remote.stderr());
    expect(opened.received).toHaveLength(1);
  });
});
