import type { ProviderEntry } from '../catalog/types.js';
import { providerSetting, type Config } from '../config.js';

/**
 * Checks what a user supplies to connect a provider against its manifest, before anything is sent
 * or stored. Every refusal names the field and says what to paste instead; none repeats a secret.
 */
export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

function strings(input: unknown): Record<string, unknown> {
  return typeof input === 'object' && input !== null && !Array.isArray(input)
    ? (input as Record<string, unknown>)
    : {};
}

/** The secrets of an api_key or webhook_url provider, each present and of the right shape. */
export function checkCredentials(
  provider: ProviderEntry,
  input: unknown,
  config: Config,
): Checked<Record<string, string>> {
  const given = strings(input);
  const auth = provider.spec.auth;
  if (auth.kind === 'webhook_url') return checkWebhook(provider, given.webhook_url, config);
  if (auth.kind !== 'api_key')
    return { ok: false, message: `${provider.displayName} is not connected with pasted credentials.` };
  const expected = Object.keys(auth.credentials);
  const unknown = Object.keys(given).filter((name) => !expected.includes(name));
  if (unknown.length > 0) {
    return {
      ok: false,
      message: `${provider.displayName} takes no credential named ${unknown.map((n) => `"${n}"`).join(', ')}; it takes ${expected.map((n) => `credentials.${n}`).join(', ')}.`,
    };
  }
  const secrets: Record<string, string> = {};
  const problems: string[] = [];
  for (const [name, field] of Object.entries(auth.credentials)) {
    const value = given[name];
    const where = field.description ? ` (${field.description})` : '';
    if (typeof value !== 'string' || value.trim() === '') {
      problems.push(`credentials.${name} is missing: paste the ${field.title}${where}.`);
    } else if (field.pattern !== undefined && !new RegExp(field.pattern, 'u').test(value.trim())) {
      problems.push(
        `credentials.${name} does not look like a ${provider.displayName} ${field.title}${where}; check that the whole value was copied.`,
      );
    } else {
      secrets[name] = value.trim();
    }
  }
  return problems.length > 0 ? { ok: false, message: problems.join(' ') } : { ok: true, value: secrets };
}

/**
 * A webhook URL must be https, on one of the manifest's hosts, and match its pattern. For tests
 * and staging, TOOLGATE_PROVIDER_<ID>_ALLOWED_HOSTS replaces the hosts; together with
 * TOOLGATE_ALLOW_PRIVATE_NETWORK it also admits http (a loopback receiver). The pattern is then
 * matched against the URL as if it were on the manifest's first host, so its path is still checked.
 */
function checkWebhook(
  provider: ProviderEntry,
  value: unknown,
  config: Config,
): Checked<Record<string, string>> {
  const auth = provider.spec.auth;
  if (auth.kind !== 'webhook_url') throw new Error('not a webhook provider');
  const title = auth.credential?.title ?? 'webhook URL';
  const where = auth.credential?.description ? ` (${auth.credential.description})` : '';
  if (typeof value !== 'string' || value.trim() === '') {
    return { ok: false, message: `credentials.webhook_url is missing: paste the ${title}${where}.` };
  }
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return { ok: false, message: `credentials.webhook_url is not a URL: paste the whole ${title}${where}.` };
  }
  const override = providerSetting(config, provider.id, 'ALLOWED_HOSTS');
  const hosts = override ? override.split(',').map((h) => h.trim().toLowerCase()) : auth.allowed_hosts;
  const httpAllowed = override !== undefined && config.allowPrivateNetwork;
  if (url.protocol !== 'https:' && !(httpAllowed && url.protocol === 'http:')) {
    return { ok: false, message: `credentials.webhook_url must be an https:// URL.` };
  }
  if (!hosts.some((host) => hostMatches(host, url))) {
    return {
      ok: false,
      message: `credentials.webhook_url must point at ${hosts.join(' or ')}, not ${url.hostname}: paste the ${title}${where}.`,
    };
  }
  const canonical = override
    ? `https://${auth.allowed_hosts[0]}${url.pathname}${url.search}`
    : url.toString();
  if (!new RegExp(auth.pattern, 'u').test(canonical)) {
    return {
      ok: false,
      message: `credentials.webhook_url does not look like a ${provider.displayName} ${title}${where}.`,
    };
  }
  return { ok: true, value: { webhook_url: url.toString() } };
}

/** `hooks.slack.com` matches that host (any port); `*.logic.azure.com` any subdomain of it. */
function hostMatches(allowed: string, url: URL): boolean {
  const host = url.hostname.toLowerCase();
  if (allowed.startsWith('*.')) return host.endsWith(allowed.slice(1)) && host.length > allowed.length - 1;
  return host === allowed || url.host.toLowerCase() === allowed;
}

/** The connection fields, each given or defaulted, from the manifest's closed choices or patterns. */
export function checkFields(provider: ProviderEntry, input: unknown): Checked<Record<string, string>> {
  const given = strings(input);
  const spec = provider.spec.connection_fields ?? {};
  const unknown = Object.keys(given).filter((name) => !(name in spec));
  if (unknown.length > 0) {
    const known = Object.keys(spec);
    return {
      ok: false,
      message: `${provider.displayName} has no connection field ${unknown.map((n) => `"${n}"`).join(', ')}${known.length > 0 ? `; its fields are ${known.join(', ')}` : ''}.`,
    };
  }
  const fields: Record<string, string> = {};
  const problems: string[] = [];
  for (const [name, field] of Object.entries(spec)) {
    const raw = given[name] ?? field.default;
    const label = field.title ?? name;
    const hint = field.description ? ` (${field.description})` : '';
    if (typeof raw !== 'string' || raw.trim() === '') {
      problems.push(
        `fields.${name} is required: the ${label}${hint}${field.enum ? `, one of ${field.enum.join(', ')}` : ''}.`,
      );
      continue;
    }
    const value = raw.trim();
    if (field.enum && !field.enum.includes(value)) {
      problems.push(`fields.${name} must be one of ${field.enum.join(', ')}.`);
    } else if (field.pattern !== undefined && !new RegExp(`^(?:${field.pattern})$`, 'u').test(value)) {
      problems.push(`fields.${name} is not a valid ${label}${hint}.`);
    } else {
      fields[name] = value;
    }
  }
  return problems.length > 0 ? { ok: false, message: problems.join(' ') } : { ok: true, value: fields };
}
