/**
 * A drafted manifest's `auth`, from the document's security schemes (3.x components.securitySchemes,
 * 2.0 securityDefinitions): API keys in a header, query or cookie, HTTP basic and bearer become
 * `api_key` credentials with their injection, OAuth2 becomes `oauth2` with its endpoints and scopes.
 * The scheme chosen is the requirement the selected operations name most often; schemes one
 * requirement combines (an API key and an application key) become one `api_key` with two credentials.
 */
import type { ManifestAuth } from '../manifest-schema.js';
import { oneLine } from '../openapi/describe.js';
import {
  isObject,
  resolveObject,
  type JsonObject,
  type OpenApiDocument,
  type OperationRef,
} from '../openapi/document.js';
import { snakeCase } from '../openapi/names.js';

type ApiKeyAuth = Extract<ManifestAuth, { kind: 'api_key' }>;
type OAuth2Auth = Extract<ManifestAuth, { kind: 'oauth2' }>;
type Credential = ApiKeyAuth['credentials'][string];
type Injection = ApiKeyAuth['inject'][number];

export interface DraftedAuth {
  auth: ManifestAuth;
  /** What the reviewer should check or do, one sentence each. */
  notes: string[];
  /** Fields the draft could not fill, as `path: what to write`. */
  fill: string[];
}

/** Stands in for an OAuth endpoint the document does not give; listed under fields to fill. */
export const PLACEHOLDER_URL = 'https://fill-in.invalid';

/** Requirements of one operation (its own `security`, else the document's): scheme name -> scopes. */
function requirements(doc: OpenApiDocument, op: OperationRef): Array<Record<string, string[]>> {
  const list = Array.isArray(op.operation.security) ? op.operation.security : doc.root.security;
  if (!Array.isArray(list)) return [];
  return list
    .filter(isObject)
    .map((req) =>
      Object.fromEntries(
        Object.entries(req).map(([name, scopes]) => [name, Array.isArray(scopes) ? scopes.map(String) : []]),
      ),
    );
}

export function securitySchemes(doc: OpenApiDocument): Map<string, JsonObject> {
  const declared =
    doc.version === '2.0'
      ? doc.root.securityDefinitions
      : isObject(doc.root.components)
        ? doc.root.components.securitySchemes
        : undefined;
  const schemes = new Map<string, JsonObject>();
  for (const [name, value] of Object.entries(isObject(declared) ? declared : {})) {
    const scheme = resolveObject(doc, value);
    if (scheme) schemes.set(name, scheme);
  }
  return schemes;
}

/** The scheme names a requirement combines, as a stable key. */
const keyOf = (req: Record<string, string[]>): string => Object.keys(req).sort().join(' + ');

/**
 * The auth of a provider whose tools are `selected`; `baseUrl` resolves relative OAuth endpoints.
 */
export function draftAuth(
  doc: OpenApiDocument,
  selected: readonly OperationRef[],
  baseUrl?: string,
): DraftedAuth {
  const schemes = securitySchemes(doc);
  if (schemes.size === 0) {
    return {
      auth: { kind: 'none' },
      notes: [
        'The document declares no security scheme, so the draft says auth: none. Check whether the API needs credentials.',
      ],
      fill: [],
    };
  }
  // The requirement most selected operations name; scopes are gathered per scheme across them.
  const counts = new Map<string, { count: number; names: string[] }>();
  const scopesUsed = new Map<string, Set<string>>();
  for (const op of selected) {
    for (const req of requirements(doc, op)) {
      const names = Object.keys(req).filter((name) => schemes.has(name));
      if (names.length === 0) continue;
      const key = keyOf(req);
      const seen = counts.get(key) ?? { count: 0, names };
      seen.count++;
      counts.set(key, seen);
      for (const name of names) {
        const used = scopesUsed.get(name) ?? new Set<string>();
        for (const scope of req[name] ?? []) used.add(scope);
        scopesUsed.set(name, used);
      }
    }
  }
  const best = [...counts.values()].sort((a, b) => b.count - a.count)[0];
  const chosen = best?.names ?? [[...schemes.keys()][0]!];
  const others = [...schemes.keys()].filter((name) => !chosen.includes(name));
  const notes: string[] = [];
  if (others.length > 0)
    notes.push(
      `The document also offers ${others.map((n) => `"${n}"`).join(', ')}; the draft uses ${chosen.map((n) => `"${n}"`).join(' + ')}, which ${best ? 'most selected operations require' : 'it declares first'}.`,
    );

  const oauth = chosen.find(
    (name) => schemes.get(name)?.type === 'oauth2' || schemes.get(name)?.type === 'openIdConnect',
  );
  if (oauth !== undefined) {
    const drafted = oauth2(oauth, schemes.get(oauth)!, scopesUsed.get(oauth) ?? new Set(), baseUrl);
    return { ...drafted, notes: [...notes, ...drafted.notes] };
  }
  const credentials: Record<string, Credential> = {};
  const inject: Injection[] = [];
  const fill: string[] = [];
  for (const name of chosen) {
    const part = credential(name, schemes.get(name)!, chosen.length === 1, notes);
    for (const [field, spec] of Object.entries(part.credentials)) {
      credentials[field] = spec;
      if (spec.description === undefined)
        fill.push(
          `auth > credentials > ${field} > description: where users find it (e.g. "Settings > API keys")`,
        );
    }
    inject.push(part.inject);
  }
  return { auth: { kind: 'api_key', credentials, inject }, notes, fill };
}

function schemeDescription(scheme: JsonObject): string | undefined {
  if (typeof scheme.description !== 'string') return undefined;
  const text = oneLine(scheme.description.replace(/<[^>]+>/g, ' '));
  return text === '' ? undefined : text.length <= 200 ? text : `${text.slice(0, 197).trimEnd()}...`;
}

/** One non-OAuth scheme as credentials and how they are sent. */
function credential(
  name: string,
  scheme: JsonObject,
  alone: boolean,
  notes: string[],
): { credentials: Record<string, Credential>; inject: Injection } {
  const description = schemeDescription(scheme);
  const field = alone ? 'api_key' : credentialName(name);
  const ref = `\${${field}}`;
  const single = (title: string): Record<string, Credential> => ({
    [field]: { title, ...(description !== undefined ? { description } : {}) },
  });
  const type = String(scheme.type);
  const httpScheme = typeof scheme.scheme === 'string' ? scheme.scheme.toLowerCase() : '';
  if (type === 'basic' || (type === 'http' && httpScheme === 'basic')) {
    return {
      credentials: {
        username: { title: 'Username', ...(description !== undefined ? { description } : {}) },
        password: { title: 'Password' },
      },
      inject: { in: 'basic', username: '${username}', password: '${password}' },
    };
  }
  if (type === 'http') {
    if (httpScheme !== 'bearer')
      notes.push(
        `Scheme "${name}" is HTTP ${httpScheme || '(no scheme)'}, which the gateway cannot compute; the draft sends "Authorization: ${httpScheme} <credential>": check it.`,
      );
    const title =
      typeof scheme.bearerFormat === 'string' ? `Access token (${scheme.bearerFormat})` : 'API token';
    return {
      credentials: single(title),
      inject:
        httpScheme === 'bearer'
          ? { in: 'bearer', format: ref }
          : { in: 'header', name: 'Authorization', format: `${httpScheme} ${ref}` },
    };
  }
  // An API key (2.0 and 3.x alike): in a header, the query or a cookie.
  const param = typeof scheme.name === 'string' && scheme.name !== '' ? scheme.name : 'X-API-Key';
  const title = alone ? 'API key' : humanTitle(name);
  if (scheme.in === 'query')
    return { credentials: single(title), inject: { in: 'query', name: param, format: ref } };
  if (scheme.in === 'cookie') {
    notes.push(`Scheme "${name}" is a cookie; the draft sends it as a Cookie header (${param}=...).`);
    return {
      credentials: single(title),
      inject: { in: 'header', name: 'Cookie', format: `${param}=${ref}` },
    };
  }
  return { credentials: single(title), inject: { in: 'header', name: param, format: ref } };
}

/** A credential name from a scheme name: snake_case, starting with a letter. */
function credentialName(scheme: string): string {
  const name = snakeCase(scheme).slice(0, 64);
  return /^[a-z]/.test(name) ? name : `key_${name}`.slice(0, 64).replace(/_+$/, '');
}

function humanTitle(text: string): string {
  const words = snakeCase(text).split('_').join(' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const FLOW_PREFERENCE = [
  'authorizationCode',
  'accessCode',
  'implicit',
  'clientCredentials',
  'application',
  'password',
];

function oauth2(
  name: string,
  scheme: JsonObject,
  used: ReadonlySet<string>,
  baseUrl: string | undefined,
): DraftedAuth {
  const notes: string[] = [];
  const fill: string[] = [];
  // 3.x: flows by name; 2.0: one flow on the scheme itself.
  const flows: Record<string, JsonObject> = isObject(scheme.flows)
    ? Object.fromEntries(
        Object.entries(scheme.flows).filter((e): e is [string, JsonObject] => isObject(e[1])),
      )
    : typeof scheme.flow === 'string'
      ? { [scheme.flow]: scheme }
      : {};
  const flowName = FLOW_PREFERENCE.find((f) => flows[f] !== undefined);
  const flow = flowName === undefined ? {} : flows[flowName]!;
  if (scheme.type === 'openIdConnect')
    notes.push(
      `Scheme "${name}" is OpenID Connect: take authorization_url and token_url from ${typeof scheme.openIdConnectUrl === 'string' ? scheme.openIdConnectUrl : 'its discovery document'}.`,
    );
  else if (flowName !== 'authorizationCode' && flowName !== 'accessCode')
    notes.push(
      `Scheme "${name}" offers no authorization code flow (${Object.keys(flows).join(', ') || 'no flow'}); a user's connection needs one: check the provider's OAuth documentation.`,
    );
  const endpoint = (key: string, field: string): string => {
    const value = typeof flow[key] === 'string' ? flow[key] : undefined;
    let url: string | undefined;
    try {
      url = value === undefined ? undefined : new URL(value, baseUrl).href;
    } catch {
      url = undefined;
    }
    if (url === undefined || !url.startsWith('https://')) {
      fill.push(`auth > ${field}: the provider's OAuth ${field.replace('_url', '')} endpoint (https)`);
      return PLACEHOLDER_URL;
    }
    return url;
  };
  const declared = Object.keys(isObject(flow.scopes) ? flow.scopes : {});
  const needed = declared.filter((s) => used.has(s));
  const defaults = needed.length > 0 ? needed : declared;
  const optional = declared.filter((s) => !defaults.includes(s));
  if (defaults.length > 0)
    notes.push(
      `Scopes: ${defaults.length} requested by default (${defaults.slice(0, 8).join(', ')}${defaults.length > 8 ? ', ...' : ''}), ${needed.length > 0 ? 'the ones the selected operations name' : 'every scope the document declares'}; keep only what the tools need (auth > scopes > default), the rest under optional.`,
    );
  notes.push(
    'OAuth2: register an OAuth app at the provider with redirect URI <TOOLGATE_BASE_URL>/oauth/callback; check whether it supports PKCE (pkce: true) and how its token endpoint takes the client credentials (token_request).',
  );
  const auth: OAuth2Auth = {
    kind: 'oauth2',
    authorization_url: endpoint('authorizationUrl', 'authorization_url'),
    token_url: endpoint('tokenUrl', 'token_url'),
    ...(defaults.length > 0
      ? { scopes: { default: defaults, ...(optional.length > 0 ? { optional } : {}), separator: ' ' } }
      : {}),
  };
  return { auth, notes, fill };
}
