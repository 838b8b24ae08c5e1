/**
 * Pass 2 of manifest validation, the checks the schema cannot express that need only the manifest
 * itself: id and file name, patterns that compile, placeholders that name something, connection
 * fields that are closed, base URLs that fit them, https webhooks, the plugin and document exist.
 * Checks that need the compiled tools live in provider.ts.
 */
import type { PluginRegistry } from './plugins/registry.js';
import type { ManifestFile } from './load.js';
import type { BaseUrlSpec, Manifest } from './manifest-schema.js';
import type { Finding } from './types.js';
import type { PathSegment, YamlSource } from './yaml-source.js';

const SCHEMA_COMMENT = /^# yaml-language-server: \$schema=\S*manifest\.schema\.json\s*$/;
const PLACEHOLDER = /\$\{([^}]*)\}/g;

export function checkMeaning(
  loaded: ManifestFile & { manifest: Manifest },
  registry: PluginRegistry,
): Finding[] {
  const { source, manifest } = loaded;
  const findings: Finding[] = [];
  const add = (...found: Finding[]) => findings.push(...found);

  if (!SCHEMA_COMMENT.test(source.text.split('\n', 1)[0] ?? '')) {
    add({
      ...source.finding(
        'TG_MANIFEST_SCHEMA_COMMENT',
        [],
        'start the file with "# yaml-language-server: $schema=./manifest.schema.json" so editors check it',
        {
          severity: 'warning',
        },
      ),
      line: 1,
      col: 1,
    });
  }
  if (manifest.id !== loaded.id) {
    add(
      source.finding(
        'TG_MANIFEST_ID_MISMATCH',
        ['id'],
        `id "${manifest.id}" differs from the file name "${loaded.id}"; rename one to match the other`,
      ),
    );
  }
  add(...checkAuth(source, manifest));
  add(...checkMcp(source, manifest));
  add(...checkFields(source, manifest));
  add(...checkBaseUrls(source, manifest));
  add(...checkServers(source, manifest));
  for (const key of ['verify', 'identity'] as const) {
    const ref = manifest[key];
    if (ref && (ref.tool !== undefined) === (ref.method !== undefined || ref.path !== undefined)) {
      add(source.finding('TG_MANIFEST_BAD_OPERATION_REF', [key], 'give either tool, or method and path'));
    } else if (ref && ref.tool === undefined && (ref.method === undefined || ref.path === undefined)) {
      add(source.finding('TG_MANIFEST_BAD_OPERATION_REF', [key], 'give both method and path'));
    }
  }
  if (manifest.plugin !== undefined && !registry.declaration(manifest.plugin)) {
    const known = registry.ids();
    add(
      source.finding(
        'TG_MANIFEST_UNKNOWN_PLUGIN',
        ['plugin'],
        `no plugin "${manifest.plugin}" is registered (${known.length > 0 ? `known: ${known.join(', ')}` : 'none are'}); add plugins/${manifest.plugin}/ and register it, or remove plugin`,
      ),
    );
  }
  if (manifest.openapi && loaded.document === undefined) {
    add(
      source.finding(
        'TG_MANIFEST_FILE_NOT_FOUND',
        ['openapi', 'file'],
        `${loaded.documentFile ?? manifest.openapi.file} does not exist; the path is relative to this manifest`,
      ),
    );
  }
  return findings;
}

function checkAuth(source: YamlSource, manifest: Manifest): Finding[] {
  const auth = manifest.auth;
  const findings: Finding[] = [];
  if (auth.kind === 'api_key') {
    for (const [name, field] of Object.entries(auth.credentials)) {
      findings.push(...checkRegex(source, field.pattern, ['auth', 'credentials', name, 'pattern']));
    }
    auth.inject.forEach((injection, i) => {
      const templates =
        injection.in === 'basic'
          ? { username: injection.username, password: injection.password ?? '' }
          : { format: injection.format };
      for (const [key, template] of Object.entries(templates)) {
        for (const name of placeholders(template)) {
          if (!(name in auth.credentials)) {
            findings.push(
              source.finding(
                'TG_MANIFEST_UNKNOWN_PLACEHOLDER',
                ['auth', 'inject', i, key],
                `\${${name}} names no credential; use one of: ${Object.keys(auth.credentials)
                  .map((c) => `\${${c}}`)
                  .join(', ')}`,
              ),
            );
          }
        }
      }
    });
  } else if (auth.kind === 'oauth2' && auth.discovery === undefined) {
    for (const key of ['authorization_url', 'token_url'] as const) {
      if (auth[key] === undefined)
        findings.push(
          source.finding(
            'TG_MANIFEST_MISSING_KEY',
            ['auth', key],
            `missing required key "${key}"; add the https URL from the provider's documentation (only an mcp provider may discover it with discovery: mcp)`,
          ),
        );
    }
  } else if (auth.kind === 'webhook_url') {
    const regex = checkRegex(source, auth.pattern, ['auth', 'pattern']);
    findings.push(...regex);
    if (regex.length === 0 && !auth.pattern.startsWith('^https://')) {
      findings.push(
        source.finding(
          'TG_MANIFEST_WEBHOOK_NOT_HTTPS',
          ['auth', 'pattern'],
          'webhook URLs must be https; start the pattern with ^https://',
        ),
      );
    }
    if (auth.credential?.pattern !== undefined)
      findings.push(...checkRegex(source, auth.credential.pattern, ['auth', 'credential', 'pattern']));
  }
  return findings;
}

/**
 * An upstream MCP server gives the tools and where they are called: nothing else may. Its auth is
 * api_key, oauth2 or none (a webhook URL is not an MCP server); `discovery: mcp` needs `mcp`.
 */
function checkMcp(source: YamlSource, manifest: Manifest): Finding[] {
  const findings: Finding[] = [];
  if (!manifest.mcp) {
    if (manifest.auth.kind === 'oauth2' && manifest.auth.discovery === 'mcp')
      findings.push(
        source.finding(
          'TG_MANIFEST_MCP_CONFLICT',
          ['auth', 'discovery'],
          'discovery: mcp reads the endpoints from an upstream MCP server; add mcp > url, or give authorization_url and token_url instead',
        ),
      );
    return findings;
  }
  for (const key of ['openapi', 'tools', 'plugin', 'api', 'verify', 'identity'] as const) {
    if (manifest[key] !== undefined)
      findings.push(
        source.finding(
          'TG_MANIFEST_MCP_CONFLICT',
          [key],
          key === 'verify' || key === 'identity'
            ? `remove ${key}: an mcp provider's credential is checked by initialize and tools/list upstream`
            : `remove ${key}: an mcp provider's tools and their endpoint come from its upstream MCP server (mcp > url)`,
        ),
      );
  }
  if (manifest.auth.kind === 'webhook_url')
    findings.push(
      source.finding(
        'TG_MANIFEST_MCP_CONFLICT',
        ['auth', 'kind'],
        'an mcp provider connects with api_key, oauth2 or none, not a webhook URL',
      ),
    );
  return findings;
}

function checkFields(source: YamlSource, manifest: Manifest): Finding[] {
  const findings: Finding[] = [];
  for (const [name, field] of Object.entries(manifest.connection_fields ?? {})) {
    const at = ['connection_fields', name];
    const regex = checkRegex(source, field.pattern, [...at, 'pattern']);
    findings.push(...regex);
    const anchored =
      field.pattern !== undefined && field.pattern.startsWith('^') && field.pattern.endsWith('$');
    if (field.enum === undefined && !anchored) {
      findings.push(
        source.finding(
          'TG_MANIFEST_FREE_FIELD',
          at,
          'give the field closed choices (enum) or a pattern anchored with ^ and $; free text could redirect requests',
        ),
      );
    }
    const fits =
      field.default === undefined ||
      ((field.enum?.includes(field.default) ?? true) &&
        (regex.length > 0 ||
          field.pattern === undefined ||
          new RegExp(field.pattern, 'u').test(field.default)));
    if (!fits)
      findings.push(
        source.finding(
          'TG_MANIFEST_BAD_DEFAULT',
          [...at, 'default'],
          `"${field.default}" is not an allowed value of the field`,
        ),
      );
  }
  return findings;
}

function checkBaseUrls(source: YamlSource, manifest: Manifest): Finding[] {
  const findings: Finding[] = [];
  const urls: Array<[PathSegment[], BaseUrlSpec]> = [];
  if (manifest.api?.base_url !== undefined) urls.push([['api', 'base_url'], manifest.api.base_url]);
  for (const [name, url] of Object.entries(manifest.api?.servers ?? {}))
    urls.push([['api', 'servers', name], url]);
  if (manifest.auth.kind !== 'webhook_url' && !manifest.mcp && manifest.api?.base_url === undefined) {
    findings.push(
      source.finding(
        'TG_MANIFEST_BASE_URL',
        manifest.api ? ['api'] : [],
        'add api > base_url, the https URL requests go to',
      ),
    );
  }
  const fields = manifest.connection_fields ?? {};
  for (const [at, url] of urls) {
    if (typeof url === 'string') {
      for (const name of placeholders(url)) {
        if (!fields[name]) {
          findings.push(
            source.finding(
              'TG_MANIFEST_UNKNOWN_PLACEHOLDER',
              at,
              `\${${name}} names no connection field; define it under connection_fields`,
            ),
          );
        }
      }
      continue;
    }
    const field = fields[url.by_field];
    if (!field?.enum) {
      findings.push(
        source.finding(
          'TG_MANIFEST_BASE_URL',
          [...at, 'by_field'],
          `"${url.by_field}" must be a connection field with enum choices`,
        ),
      );
      continue;
    }
    const missing = field.enum.filter((value) => !(value in url.values));
    const extra = Object.keys(url.values).filter((value) => !field.enum?.includes(value));
    if (missing.length > 0 || extra.length > 0) {
      findings.push(
        source.finding(
          'TG_MANIFEST_BASE_URL',
          [...at, 'values'],
          `values must have exactly the choices of "${url.by_field}" (${field.enum.join(', ')})` +
            (missing.length > 0 ? `; missing: ${missing.join(', ')}` : '') +
            (extra.length > 0 ? `; not a choice: ${extra.join(', ')}` : ''),
        ),
      );
    }
  }
  return findings;
}

function checkServers(source: YamlSource, manifest: Manifest): Finding[] {
  const servers = manifest.api?.servers ?? {};
  const uses: Array<[PathSegment[], string | undefined]> = [
    [['openapi', 'server'], manifest.openapi?.server],
    ...Object.entries(manifest.openapi?.overrides ?? {}).map(
      ([key, o]): [PathSegment[], string | undefined] => [['openapi', 'overrides', key, 'server'], o.server],
    ),
    ...(manifest.tools ?? []).map((t, i): [PathSegment[], string | undefined] => [
      ['tools', i, 'request', 'server'],
      t.request.server,
    ]),
  ];
  return uses
    .filter(([, name]) => name !== undefined && !(name in servers))
    .map(([at, name]) =>
      source.finding(
        'TG_MANIFEST_UNKNOWN_SERVER',
        at,
        `no server "${name}" under api > servers; define it or remove server`,
      ),
    );
}

function checkRegex(source: YamlSource, pattern: string | undefined, at: PathSegment[]): Finding[] {
  if (pattern === undefined) return [];
  try {
    new RegExp(pattern, 'u');
    return [];
  } catch (error) {
    return [
      source.finding('TG_MANIFEST_BAD_REGEX', at, `${(error as Error).message}; fix the regular expression`),
    ];
  }
}

function placeholders(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => m[1] ?? '');
}
