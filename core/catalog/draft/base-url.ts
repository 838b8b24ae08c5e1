/**
 * A drafted manifest's base URL, from the document's servers (3.x: the first server, its variables
 * set to their defaults; 2.0: scheme, host and basePath). A relative server URL is resolved against
 * the URL the document was fetched from; the manifest needs https.
 */
import { isObject, type OpenApiDocument } from '../openapi/document.js';

export interface DraftedBaseUrl {
  /** Undefined when the document gives none the draft can use. */
  url?: string;
  notes: string[];
}

export function draftBaseUrl(doc: OpenApiDocument, sourceUrl?: string): DraftedBaseUrl {
  const notes: string[] = [];
  let raw: string | undefined;
  let from: string;
  if (doc.version === '2.0') {
    const host = typeof doc.root.host === 'string' ? doc.root.host : undefined;
    const basePath = typeof doc.root.basePath === 'string' ? doc.root.basePath : '';
    const schemes = Array.isArray(doc.root.schemes) ? doc.root.schemes.map(String) : [];
    const scheme = schemes.includes('https') || schemes.length === 0 ? 'https' : schemes[0]!;
    raw = host === undefined ? basePath || undefined : `${scheme}://${host}${basePath}`;
    from = host === undefined ? 'basePath (the document names no host)' : 'host and basePath';
  } else {
    const servers = Array.isArray(doc.root.servers) ? doc.root.servers.filter(isObject) : [];
    const first = servers[0];
    from = first === undefined ? 'no servers: "/" of the document\'s location' : 'servers[0]';
    raw =
      first === undefined
        ? sourceUrl === undefined
          ? undefined
          : '/'
        : typeof first.url === 'string'
          ? first.url
          : '';
    const variables = isObject(first?.variables) ? first.variables : {};
    raw = raw?.replace(/\{([^}]+)\}/g, (whole, name: string) => {
      const variable = variables[name];
      const value = isObject(variable) && typeof variable.default === 'string' ? variable.default : undefined;
      if (value === undefined) return whole;
      const choices =
        isObject(variable) && Array.isArray(variable.enum) ? ` of ${variable.enum.join(', ')}` : '';
      notes.push(`Server variable ${name} is set to its default "${value}"${choices}.`);
      return value;
    });
    if (servers.length > 1)
      notes.push(
        `The document lists ${servers.length - 1} more server(s) (${servers
          .slice(1, 4)
          .map((s) => (typeof s.url === 'string' ? s.url : '?'))
          .join(
            ', ',
          )}${servers.length > 4 ? ', ...' : ''}); add one under api.servers if some tools need it.`,
      );
  }
  if (raw === undefined || /\{[^}]+\}/.test(raw)) return { notes };
  let url: URL;
  try {
    url = new URL(raw, sourceUrl);
  } catch {
    return {
      notes: [
        ...notes,
        `The server URL "${raw}" (${from}) is relative and the document was read from a file.`,
      ],
    };
  }
  if (url.protocol === 'http:') {
    notes.push(
      `The document's server is http://${url.host}; the draft uses https, which the gateway requires.`,
    );
    url.protocol = 'https:';
  }
  if (url.protocol !== 'https:') return { notes };
  return {
    url: url.href.replace(/\/+$/, ''),
    notes: [`Base URL ${url.href.replace(/\/+$/, '')}, from ${from}.`, ...notes],
  };
}
