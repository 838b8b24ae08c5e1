import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// The dashboard admin's password: only an scrypt hash is stored, as `scrypt$<N>$<r>$<p>$<salt>$<hash>`
// (base64url), so the cost can be raised later without invalidating stored hashes. Hashing runs on the
// libuv pool, never blocking the event loop.
const COST = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;
// scrypt needs 128·N·r bytes; Node's default ceiling (32 MiB) is exactly that, so leave room.
const MAX_MEMORY = 64 * 1024 * 1024;

/** Shortest password `toolgate admin set-password` accepts. */
export const MIN_PASSWORD_LENGTH = 12;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LENGTH, { ...options, maxmem: MAX_MEMORY }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** A password for the first-start banner: 144 random bits in 24 URL-safe characters. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Constant-time check of a password against a stored hash; false for a hash of another scheme. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}
