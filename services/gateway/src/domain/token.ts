import { createHash, randomBytes } from 'node:crypto';

const TOKEN_PREFIX = 'pack_';

/** 32 random bytes, URL-safe; the prefix makes leaked tokens easy to recognise in scanners. */
export function generateToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** Tokens carry 256 bits of entropy, so a fast hash is enough (no password-style stretching). */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function tokenPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX.length + 6);
}

/** The token of an `Authorization: Token <token>` header, or null. */
export function tokenFromHeader(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Token\s+(\S{16,512})\s*$/i.exec(header);
  return match?.[1] ?? null;
}
