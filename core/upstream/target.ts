/**
 * An outbound request's URL, read as the WHATWG URL parser (`new URL`) reads it. A provider call's
 * URL is its provider's origin followed by a path and query that request building percent-encoded,
 * and `new URL` on the whole of it cost about 5k instructions of a tools/call
 * (scripts/bench/instructions.ts). So the origin is parsed once and kept, and a path and query of
 * characters the parser leaves as they are (no dot segment, no fragment, nothing it would
 * percent-encode) are taken as written; any other URL is parsed whole. The host is always the
 * parser's own reading (the outbound guard judges it), of the very text it heads.
 */
import { Lru } from '../lru.js';

export interface Target {
  /** The URL as the parser serializes it. */
  href: string;
  /** `scheme://host[:port]`, the default port left out. */
  origin: string;
  /** The scheme with its colon (`https:`). */
  protocol: string;
  /** The host as the parser reads it (an IPv6 address in brackets). */
  hostname: string;
  /** The path and query, as the request line carries them. */
  path: string;
}

type Origin = Pick<Target, 'origin' | 'protocol' | 'hostname'>;

/** `http://` or `https://` and a host name or address with an optional port, up to the path or query. */
const PREFIX = /^https?:\/\/(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d*)?(?=[/?]|$)/;
/**
 * A path and query the parser keeps as written: segments of unreserved characters, sub-delimiters,
 * `:`, `@` and `%`; a query of those, `/` and `?`, but not `'` (which a special URL's query
 * percent-encodes) and not empty (a lone `?` is dropped from the path and query).
 */
const PLAIN_REST = /^(?:\/[\w\-.~!$&'()*+,;=:@%]*)*(?:\?[\w\-.~!$&()*+,;=:@%/?]+)?$/;
/** A `.` or `..` segment, percent-encoded or not, which the parser resolves away. */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?=[/?]|$)/i;

/** Origins read lately: a gateway calls a bounded set of hosts, each over and over. */
const ORIGINS = new Lru<string, Origin>(256);

/** The target of `raw`, or undefined when it is not a valid URL. */
export function readTarget(raw: string): Target | undefined {
  const prefix = PREFIX.exec(raw)?.[0];
  if (prefix !== undefined) {
    const rest = raw.slice(prefix.length);
    if (PLAIN_REST.test(rest) && !DOT_SEGMENT.test(rest)) {
      const origin = originOf(prefix);
      if (origin === undefined) return undefined;
      // An empty path is `/`, also before a query.
      const path = rest === '' || rest.startsWith('?') ? `/${rest}` : rest;
      return {
        href: origin.origin + path,
        origin: origin.origin,
        protocol: origin.protocol,
        hostname: origin.hostname,
        path,
      };
    }
  }
  const url = parsed(raw);
  return (
    url && {
      href: url.href,
      origin: url.origin,
      protocol: url.protocol,
      hostname: url.hostname,
      path: url.pathname + url.search,
    }
  );
}

function originOf(prefix: string): Origin | undefined {
  let origin = ORIGINS.get(prefix);
  if (origin === undefined) {
    const url = parsed(prefix);
    if (url === undefined) return undefined;
    origin = { origin: url.origin, protocol: url.protocol, hostname: url.hostname };
    ORIGINS.set(prefix, origin);
  }
  return origin;
}

function parsed(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}
