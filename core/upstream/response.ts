/**
 * Reading what a provider answered: its body decoded by the declared charset, parsed when it is
 * JSON, its own explanation of a failure (short, with the connection's secrets blanked out), and
 * how long it asks callers to wait. Used by result shaping (tools/) and credential checks
 * (connections/) alike.
 */
import { TextDecoder } from 'node:util';
import { Lru } from '../lru.js';
import type { OutboundResponse } from './outbound.js';

const PROVIDER_MESSAGE_MAX = 300;
// Credentials shorter than this are not searched for: blanking "1234" would garble unrelated text.
const SECRET_MIN_LENGTH = 6;

/** The provider's own explanation of a failed response, from the error shapes APIs commonly use. */
export function providerMessage(response: OutboundResponse, secrets: readonly string[]): string | undefined {
  const contentType = headerValue(response.headers, 'content-type') ?? '';
  const type = mediaType(contentType);
  const body = redact(decode(response.body, type), secrets).trim();
  if (body === '') return undefined;
  const json = parseJson(body, type);
  let message: string | undefined;
  if (json !== undefined) message = messageFromJson(json.value);
  else if (/html/i.test(contentType) || body.startsWith('<'))
    message = /<title[^>]*>([^<]*)<\/title>/i.exec(body)?.[1];
  else message = body;
  if (message === undefined) return undefined;
  const short = clip(message.replace(/\s+/g, ' ').trim(), PROVIDER_MESSAGE_MAX);
  return short === '' ? undefined : short;
}

export function messageFromJson(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (!isRecord(value)) return undefined;
  const { error, errors } = value;
  const code = typeof error === 'string' ? error : undefined;
  const description = stringField(value, 'error_description');
  const main =
    // OAuth-style `{error: "invalid_token", error_description: "..."}`: both halves say something.
    (code !== undefined && description !== undefined ? `${code}: ${description}` : undefined) ??
    stringField(value, 'message') ??
    // PascalCase APIs (Postmark's {ErrorCode, Message}, .NET services).
    stringField(value, 'Message') ??
    // `{error: {message}}`, or `{error: {id, name, detail}}` (YNAB).
    (isRecord(error) ? (stringField(error, 'message') ?? stringField(error, 'detail')) : undefined) ??
    code ??
    description ??
    stringField(value, 'detail') ??
    stringField(value, 'title');
  // Lists of details: `errors: [{message}]`, Jira's `errorMessages: [...]` and `errors: {field: text}`.
  const listed: unknown[] = [
    ...(Array.isArray(errors) ? (errors as unknown[]) : []),
    ...(Array.isArray(value.errorMessages) ? (value.errorMessages as unknown[]) : []),
    ...(isRecord(errors)
      ? Object.entries(errors).map(([field, text]) =>
          typeof text === 'string' ? `${field}: ${text}` : undefined,
        )
      : []),
  ];
  const details = listed
    .slice(0, 3)
    .map((item) =>
      typeof item === 'string'
        ? item
        : isRecord(item)
          ? (stringField(item, 'message') ??
            stringField(item, 'detail') ??
            // Linode's `errors: [{reason, field}]`.
            stringField(item, 'reason') ??
            // GitHub's validation errors: {resource, field, code} without a message.
            (stringField(item, 'field') !== undefined && stringField(item, 'code') !== undefined
              ? `${stringField(item, 'field')!}: ${stringField(item, 'code')!}`
              : undefined))
          : undefined,
    )
    .filter((item): item is string => item !== undefined && item !== main);
  if (main === undefined) return details.length > 0 ? details.join('; ') : undefined;
  return details.length > 0 ? `${main} (${details.join('; ')})` : main;
}

export function stringField(record: Record<string, unknown>, name: string): string | undefined {
  const value = record[name];
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

// Seconds to wait, from `Retry-After` (delta seconds or an HTTP-date), else from the rate-limit
// reset headers GitHub and others send (epoch seconds or delta seconds).
export function retryAfterSeconds(headers: OutboundResponse['headers']): number | undefined {
  const retryAfter = headerValue(headers, 'retry-after')?.trim();
  if (retryAfter !== undefined && retryAfter !== '') {
    if (/^\d+$/.test(retryAfter)) return Number(retryAfter);
    const at = Date.parse(retryAfter);
    if (!Number.isNaN(at)) return Math.max(0, Math.ceil((at - Date.now()) / 1000));
  }
  const reset = headerValue(headers, 'x-ratelimit-reset') ?? headerValue(headers, 'ratelimit-reset');
  if (reset === undefined || !/^\d+$/.test(reset.trim())) return undefined;
  const value = Number(reset);
  // A value past 2001 in epoch seconds is a moment, not a delay.
  return value > 1_000_000_000 ? Math.max(0, value - Math.floor(Date.now() / 1000)) : value;
}

/** What a Content-Type says of the body it heads. */
export interface MediaType {
  /** Shown to an agent as text: text/*, JSON, XML, JavaScript, YAML, CSV, forms, GraphQL; no type at all. */
  textual: boolean;
  /** Declared JSON (`application/json`, `application/problem+json`, ...). */
  json: boolean;
  /** No Content-Type was sent: a body that looks like JSON is read as JSON. */
  absent: boolean;
  /** The decoder of a declared charset other than UTF-8 that TextDecoder knows; else the body is UTF-8. */
  decoder: TextDecoder | undefined;
}

/**
 * Content-Types read lately, by their text: a provider sends the same one with every answer, and
 * reading one takes five regular expressions, about 5k instructions of a tools/call
 * (scripts/bench/instructions.ts). Bounded: a header is the provider's to choose.
 */
const MEDIA_TYPES = new Lru<string, MediaType>(256);

/** What a Content-Type header's text says (see {@link MediaType}); `''` when there was none. */
export function mediaType(contentType: string): MediaType {
  let type = MEDIA_TYPES.get(contentType);
  if (type === undefined) {
    type = readMediaType(contentType);
    MEDIA_TYPES.set(contentType, type);
  }
  return type;
}

function readMediaType(contentType: string): MediaType {
  const essence = contentType.split(';')[0] ?? '';
  const charset = /charset="?([^";\s]+)/i.exec(contentType)?.[1];
  let decoder: TextDecoder | undefined;
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    try {
      decoder = new TextDecoder(charset);
    } catch {
      // An unknown charset label: UTF-8 is the best guess for an API.
    }
  }
  return {
    textual:
      contentType === '' ||
      /^\s*text\//i.test(contentType) ||
      /json|xml|javascript|yaml|csv|x-www-form-urlencoded|graphql/i.test(essence),
    json: /^[^;]*[/+]json\s*(;|$)/i.test(contentType),
    absent: contentType === '',
    decoder,
  };
}

/** Whether a body is to be read as JSON: its type says so, or it has none and looks like JSON. */
export function isJsonBody(body: string, type: MediaType): boolean {
  return type.json || (type.absent && /^\s*[[{]/.test(body));
}

export function parseJson(body: string, type: MediaType): { value: unknown } | undefined {
  return isJsonBody(body, type) ? parseJsonText(body) : undefined;
}

/** A body already judged JSON ({@link isJsonBody}), parsed; undefined when it does not parse. */
export function parseJsonText(body: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(body) as unknown };
  } catch {
    return undefined;
  }
}

export function decode(body: Buffer, type: MediaType): string {
  return type.decoder?.decode(body) ?? body.toString('utf8');
}

export function headerValue(headers: OutboundResponse['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function redact(value: string, secrets: readonly string[]): string {
  let result = value;
  for (const secret of secrets) {
    // Searched first: nearly every answer holds no credential, and a split and join copies it whole.
    if (secret.length >= SECRET_MIN_LENGTH && result.includes(secret))
      result = result.split(secret).join('[redacted]');
  }
  return result;
}

export function clip(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max - 1)}…`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
