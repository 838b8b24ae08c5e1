import { createHmac, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Caller API keys (DESIGN.md, Fixed interfaces): `toolgate_` + 43 base62 characters (256 random
 * bits) + 6 base62 characters of CRC32 over everything before them. The checksum lets a mistyped
 * key be refused without touching the store and lets secret scanners recognise a leaked key
 * (GitHub's token scheme). Keys are stored only as an HMAC-SHA256 under a versioned hashing secret.
 */
export const KEY_PREFIX = 'toolgate_';
const BODY_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
export const KEY_LENGTH = KEY_PREFIX.length + BODY_LENGTH + CHECKSUM_LENGTH;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

function base62(value: bigint, width: number): string {
  let out = '';
  let rest = value;
  while (rest > 0n) {
    out = ALPHABET[Number(rest % 62n)]! + out;
    rest /= 62n;
  }
  return out.padStart(width, '0');
}

/** {@link base62} of a safe integer, in plain number arithmetic (a BigInt loop costs ~1 µs per key check). */
function base62Number(value: number, width: number): string {
  let out = '';
  for (let rest = value; rest > 0; rest = Math.floor(rest / 62)) out = ALPHABET[rest % 62]! + out;
  return out.padStart(width, '0');
}

function checksum(text: string): string {
  return base62Number(crc32(text), CHECKSUM_LENGTH);
}

/** A new random key in the documented format. */
export function generateApiKey(): string {
  const body = base62(BigInt('0x' + randomBytes(32).toString('hex')), BODY_LENGTH);
  const head = KEY_PREFIX + body;
  return head + checksum(head);
}

/** True when `key` has the format and a matching checksum: checked before any store lookup. */
export function isWellFormedApiKey(key: string): boolean {
  if (key.length !== KEY_LENGTH || !KEY_PATTERN.test(key)) return false;
  const head = key.slice(0, KEY_LENGTH - CHECKSUM_LENGTH);
  return checksum(head) === key.slice(KEY_LENGTH - CHECKSUM_LENGTH);
}

/** The stored lookup hash of a key under one version of the hashing secret (hex). */
export function hashApiKey(key: string, secret: Buffer): string {
  return createHmac('sha256', secret).update(key).digest('hex');
}

/** A short display hint that identifies a key to its owner without revealing it. */
export function keyHint(key: string): string {
  return `${KEY_PREFIX}…${key.slice(-4)}`;
}
