import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { PendingLogin } from '../domain/sign-in';

/**
 * The state, nonce and PKCE verifier of an identity-provider sign-in travel in an encrypted,
 * short-lived, HttpOnly cookie between the start and the callback: any gateway replica can finish
 * the sign-in, and nothing is stored for a sign-in that is never completed.
 */
export const LOGIN_COOKIE = 'pack_oidc_login';
export const LOGIN_COOKIE_PATH = '/v1/core/auth/oidc/';
const LIFETIME_S = 600;

/** The pending sign-in, and the console page to land on when the console started it. */
export type SealedLogin = PendingLogin & { returnTo?: string };

function valueOf(cookieHeader: string | undefined): string | undefined {
  return cookieHeader
    ?.split(';')
    .map((part) => part.trim())
    .find((part) => part.startsWith(`${LOGIN_COOKIE}=`))
    ?.slice(LOGIN_COOKIE.length + 1);
}

export class LoginCookie {
  private readonly key: Buffer;

  constructor(internalSecret: string) {
    this.key = Buffer.from(hkdfSync('sha256', internalSecret, 'pack-gateway', 'oidc-login-cookie', 32));
  }

  /** The Set-Cookie value that carries `pending`. */
  seal(pending: SealedLogin, secure: boolean, now = Date.now()): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const plain = JSON.stringify({ ...pending, exp: now + LIFETIME_S * 1000 });
    const sealed = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const value = Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
    return this.cookie(value, LIFETIME_S, secure);
  }

  /** The Set-Cookie value that removes the cookie (once used, or refused). */
  clear(secure: boolean): string {
    return this.cookie('', 0, secure);
  }

  /** Whether a Cookie header carries a (non-empty) sign-in cookie, whether or not it opens. */
  present(cookieHeader: string | undefined): boolean {
    return Boolean(valueOf(cookieHeader));
  }

  /** The pending sign-in of a Cookie header, or null when there is none, or it is forged or stale. */
  open(cookieHeader: string | undefined, now = Date.now()): SealedLogin | null {
    const value = valueOf(cookieHeader);
    if (!value) return null;
    try {
      const raw = Buffer.from(value, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      const plain = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
      const parsed = JSON.parse(plain) as SealedLogin & { exp: number };
      if (typeof parsed.exp !== 'number' || parsed.exp <= now) return null;
      if (typeof parsed.issuer !== 'string' || typeof parsed.redirectUri !== 'string') return null;
      const { state, nonce, codeVerifier, issuer, redirectUri, returnTo } = parsed;
      return {
        state,
        nonce,
        codeVerifier,
        issuer,
        redirectUri,
        ...(typeof returnTo === 'string' ? { returnTo } : {}),
      };
    } catch {
      return null; // not ours, or tampered with
    }
  }

  private cookie(value: string, maxAge: number, secure: boolean): string {
    return `${LOGIN_COOKIE}=${value}; Path=${LOGIN_COOKIE_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  }
}
