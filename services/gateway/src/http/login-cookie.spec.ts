import { LOGIN_COOKIE, LoginCookie } from './login-cookie';

const pending = {
  state: 'state-1',
  nonce: 'nonce-1',
  codeVerifier: 'verifier-1',
  issuer: 'https://idp.example.com/realms/pack',
  redirectUri: 'https://pack.example.com/v1/core/auth/oidc/callback/',
};
const SECRET = 'internal-secret-of-at-least-32-characters';
/** The Cookie header a browser sends back for a Set-Cookie value. */
const sentBack = (setCookie: string) => `other=1; ${setCookie.split(';')[0]}`;

describe('login cookie', () => {
  it('carries the pending sign-in to the callback, HttpOnly, on the OIDC paths only', () => {
    const cookie = new LoginCookie(SECRET);
    const setCookie = cookie.seal(pending, true, 1_000);
    expect(setCookie).toMatch(
      new RegExp(
        `^${LOGIN_COOKIE}=[^;]+; Path=/v1/core/auth/oidc/; Max-Age=600; HttpOnly; SameSite=Lax; Secure$`,
      ),
    );
    expect(setCookie).not.toContain('verifier-1');
    expect(cookie.open(sentBack(setCookie), 2_000)).toEqual(pending);
  });

  it('refuses a cookie that expired, was changed, or was sealed with another secret', () => {
    const cookie = new LoginCookie(SECRET);
    const setCookie = cookie.seal(pending, false, 1_000);
    expect(cookie.open(sentBack(setCookie), 1_000 + 600_001)).toBeNull();
    const value = setCookie.split(';')[0]!.slice(LOGIN_COOKIE.length + 1);
    const flipped = `${value.slice(0, -2)}${value.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(cookie.open(`${LOGIN_COOKIE}=${flipped}`, 2_000)).toBeNull();
    expect(new LoginCookie(`${SECRET}-other`).open(sentBack(setCookie), 2_000)).toBeNull();
    expect(cookie.open(undefined)).toBeNull();
  });
});
