/**
 * The bundled providers whose tools come from a vendor's MCP server cannot be exercised against the
 * vendor here, so each one's facts (endpoint, transport, how users authenticate) must say where they
 * were read (issue 17): a `# Facts (read YYYY-MM-DD): https://...` comment naming the endpoint.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const MANIFESTS = fileURLToPath(new URL('../../../manifests/', import.meta.url));

interface McpManifest {
  id: string;
  mcp?: { url: string };
}

const mcpManifests = readdirSync(MANIFESTS)
  .filter((file) => file.endsWith('.yaml') && !file.endsWith('.openapi.yaml'))
  .map((file) => {
    const text = readFileSync(`${MANIFESTS}${file}`, 'utf8');
    return { file, text, manifest: parse(text) as McpManifest };
  })
  .filter(({ manifest }) => manifest.mcp !== undefined);

describe('bundled MCP-server providers', () => {
  it('exist (the catalog carries vendors’ own MCP servers)', () => {
    expect(mcpManifests.length).toBeGreaterThanOrEqual(10);
  });

  it.each(mcpManifests.map((m) => [m.file, m] as const))(
    '%s cites the page its facts come from and names its https endpoint there',
    (_file, { text, manifest }) => {
      const url = manifest.mcp!.url;
      expect(url).toMatch(/^https:\/\/[^\s/]+/);
      const comment = text
        .split('\n')
        .filter((line) => line.startsWith('#'))
        .join('\n');
      expect(comment).toMatch(/^# Facts \(read \d{4}-\d{2}-\d{2}\): https:\/\/\S+/m);
      // The endpoint is one of the facts read, not a guess.
      expect(comment).toContain(url.replace(/\/$/, ''));
    },
  );
});
