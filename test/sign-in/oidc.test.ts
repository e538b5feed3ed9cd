import { seededSecret, storedDocuments } from '@pack/testkit';
import { startSignInStack, type SignInStack } from './harness';
import { browseToCallback, reservePort, startOidcProvider, type OidcProvider } from './oidc-provider';

/**
 * Sign-in through a real OpenID provider (the oidc-provider package, on loopback): the
 * authorization-code flow with state, nonce and PKCE, through the gateway, with the issuer, the
 * redirect base and the client's credentials taken from the general settings at each sign-in
 * (the gateway has no OIDC_ISSUER_URL or PUBLIC_URL unless a test says so).
 */
const CLIENT_ID = 'pack-platform';
const CLIENT_SECRET = seededSecret('the CLIENT_SECRET', { prefix: 'client-secret-for-tests-' });
const START = '/v1/core/auth/oidc/login/';

describe('sign-in through the identity provider (OpenID Connect)', () => {
  let stack: SignInStack;
  let provider: OidcProvider;

  const oauth = (overrides: Record<string, unknown> = {}) => ({
    oauth: {
      ENABLED: true,
      CLIENT_ID,
      CLIENT_SECRET,
      ISSUER_URL: provider.issuer,
      REDIRECT_BASE_URL: stack.gateway.url,
      ...overrides,
    },
  });
  const finish = ({ callbackUrl, gatewayCookie }: { callbackUrl: string; gatewayCookie: string }) =>
    fetch(callbackUrl, { headers: { cookie: gatewayCookie } });

  beforeAll(async () => {
    const port = await reservePort();
    stack = await startSignInStack({ SIGNIN_ROLE_GROUPS: 'platform-admins=admin,owners=service_owner' });
    provider = await startOidcProvider({
      port,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      redirectUri: `${stack.gateway.url}/v1/core/auth/oidc/callback/`,
      accounts: {
        'sub-erin': {
          preferred_username: 'erin',
          email: 'erin@example.com',
          email_verified: true,
          groups: ['platform-admins'],
        },
        'sub-frank': { preferred_username: 'frank', email: 'frank@example.com', email_verified: true },
      },
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await provider?.stop();
  });

  it('is refused with a clear 403 while the identity provider is not enabled', async () => {
    const answer = await stack.call('GET', START, { token: null });
    expect(answer.status).toBe(403);
    expect(answer.body.detail).toBe(
      'Sign-in is off: neither LDAP nor the identity provider is enabled in the general settings.',
    );
  });

  it('redirects to the provider with state, nonce and PKCE, and answers an expiring token at the callback', async () => {
    await stack.patchSettings(oauth());
    const start = await fetch(`${stack.gateway.url}${START}`, { redirect: 'manual' });
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.origin).toBe(provider.issuer);
    expect(authorize.searchParams.get('client_id')).toBe(CLIENT_ID);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    for (const name of ['state', 'nonce', 'code_challenge'])
      expect(authorize.searchParams.get(name)).toBeTruthy();
    expect(start.headers.get('set-cookie')).toMatch(/^pack_oidc_login=[^;]+;.*HttpOnly/);

    const answer = await finish(await browseToCallback(stack.gateway.url, 'sub-erin'));
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as {
      id: number;
      token: string;
      expires_at: string;
      user: { id: number };
    };
    expect(body.user).toMatchObject({ username: 'erin', role: 'admin' });
    expect(Date.parse(body.expires_at)).toBeGreaterThan(Date.now() + 7 * 3600_000);
    const user = await stack.call('GET', `/v1/core/users/${body.user.id}/`, { token: body.token });
    expect(user.body).toMatchObject({ origin: 'oidc', email: 'erin@example.com' });

    // A user without a group the rules name gets the default role.
    const frank = await finish(await browseToCallback(stack.gateway.url, 'sub-frank'));
    expect(((await frank.json()) as { user: { role: string } }).user.role).toBe('consumer');
  });

  it('refuses a callback without the login cookie, with a foreign one, with a tampered state, or replayed, storing nothing', async () => {
    await stack.patchSettings(oauth());
    const before = await storedDocuments(stack.gateway);
    const flow = await browseToCallback(stack.gateway.url, 'sub-erin');

    const noCookie = await fetch(flow.callbackUrl);
    expect(noCookie.status).toBe(400);
    expect(((await noCookie.json()) as { detail: string }).detail).toMatch(/^No sign-in in progress/);

    // A cookie this platform did not seal (or one past its 10 minutes) is refused as forbidden.
    const foreign = await finish({ ...flow, gatewayCookie: 'pack_oidc_login=c2VhbGVkLWVsc2V3aGVyZQ' });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { detail: string }).detail).toBe(
      'This sign-in was not started here, or is older than 10 minutes; start again at GET /v1/core/auth/oidc/login/.',
    );

    const tampered = new URL(flow.callbackUrl);
    tampered.searchParams.set('state', 'forged-state');
    const forged = await finish({ ...flow, callbackUrl: tampered.href });
    expect(forged.status).toBe(400);
    expect(await storedDocuments(stack.gateway)).toEqual(before);

    // The real callback still works once; its code cannot be used a second time.
    expect((await finish(flow)).status).toBe(200);
    expect((await finish(flow)).status).toBe(400);
  });

  it('reports a client the provider refuses, with the new secret applied to the next sign-in', async () => {
    await stack.patchSettings(
      oauth({ CLIENT_SECRET: seededSecret('a wrong CLIENT_SECRET', { prefix: 'a-wrong-client-secret-' }) }),
    );
    const answer = await finish(await browseToCallback(stack.gateway.url, 'sub-erin'));
    expect(answer.status).toBe(502);
    const body = (await answer.json()) as { detail: string };
    expect(body.detail).toBe(
      `The identity provider ${provider.issuer} refused the client; check CLIENT_ID and CLIENT_SECRET in the general settings.`,
    );

    await stack.patchSettings(oauth({ ENABLED: false }));
    expect((await stack.call('GET', START, { token: null })).status).toBe(403);
  });

  it('signs in with the issuer and redirect base set in the general settings alone, the gateway having no OIDC_ISSUER_URL or PUBLIC_URL', async () => {
    await stack.patchSettings(oauth());
    const read = await stack.call('GET', '/v1/core/general_settings/');
    expect(read.body.oauth).toMatchObject({
      ISSUER_URL: provider.issuer,
      REDIRECT_BASE_URL: stack.gateway.url,
    });
    const start = await fetch(`${stack.gateway.url}${START}`, { redirect: 'manual' });
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get('location')!);
    expect(authorize.origin).toBe(provider.issuer);
    expect(authorize.searchParams.get('redirect_uri')).toBe(
      `${stack.gateway.url}/v1/core/auth/oidc/callback/`,
    );
    const answer = await finish(await browseToCallback(stack.gateway.url, 'sub-erin'));
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { user: unknown }).user).toMatchObject({
      username: 'erin',
      role: 'admin',
    });
  });

  it("takes a blank issuer and redirect base from the gateway's OIDC_ISSUER_URL and PUBLIC_URL", async () => {
    await stack.patchSettings(oauth({ ISSUER_URL: '', REDIRECT_BASE_URL: '' }));
    const replica = await stack.replica({ OIDC_ISSUER_URL: provider.issuer, PUBLIC_URL: stack.gateway.url });
    // The provider sends the browser to PUBLIC_URL, where another replica, without these
    // variables, finishes the sign-in with the issuer it started with.
    const answer = await finish(await browseToCallback(replica.url, 'sub-erin', stack.gateway.url));
    expect(answer.status).toBe(200);
  });

  it('answers a 409 naming the setting and where to set it while sign-in is enabled without an issuer, never a bare 502', async () => {
    await stack.patchSettings(oauth({ ISSUER_URL: '' }));
    const answer = await stack.call('GET', START, { token: null });
    expect(answer.status).toBe(409);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(answer.body.detail).toBe(
      'Sign-in through the identity provider is enabled but not usable: set oauth.ISSUER_URL in the general settings (Identity-provider OAuth).',
    );
    expect(answer.body.errors).toEqual({
      'oauth.ISSUER_URL': [
        "is empty and the gateway has no OIDC_ISSUER_URL: set the identity provider's issuer URL in the general settings (Identity-provider OAuth)",
      ],
    });
  });

  it('applies a new issuer to the next sign-in, and reports one that cannot be reached with a 502 that says so', async () => {
    const closed = `http://127.0.0.1:${await reservePort()}`;
    await stack.patchSettings(oauth({ ISSUER_URL: closed }));
    const answer = await fetch(`${stack.gateway.url}${START}`, { redirect: 'manual' });
    expect(answer.status).toBe(502);
    expect(((await answer.json()) as { detail: string }).detail).toMatch(
      new RegExp(`^The identity provider ${closed} is unreachable`),
    );
    await stack.patchSettings(oauth());
    expect((await finish(await browseToCallback(stack.gateway.url, 'sub-erin'))).status).toBe(200);
  });

  it('refuses an issuer URL at a link-local or cloud metadata address, or with a query, naming oauth.ISSUER_URL and storing nothing', async () => {
    const before = await stack.call('GET', '/v1/core/general_settings/');
    for (const [issuer, message] of [
      [
        'http://169.254.169.254/',
        'host 169.254.169.254 is a cloud metadata address: the identity provider may be reached there only if PACK_ALLOWED_TARGET_CIDRS of the gateway and settings services names its range',
      ],
      [
        'https://[fe80::1]/realms/pack',
        'host fe80::1 is a link-local address: the identity provider may be reached there only if PACK_ALLOWED_TARGET_CIDRS of the gateway and settings services names its range',
      ],
      ['https://idp.example.com/?tenant=1', 'must not carry a query (?) or fragment (#)'],
    ]) {
      const answer = await stack.call('PATCH', '/v1/core/general_settings/', {
        body: { oauth: { ISSUER_URL: issuer } },
      });
      expect({ issuer, status: answer.status, errors: answer.body.errors }).toEqual({
        issuer,
        status: 400,
        errors: { 'oauth.ISSUER_URL': [message] },
      });
    }
    const redirect = await stack.call('PATCH', '/v1/core/general_settings/', {
      body: { oauth: { REDIRECT_BASE_URL: 'https://pack.example.com/console' } },
    });
    expect(redirect.body.errors).toEqual({
      'oauth.REDIRECT_BASE_URL': [
        'must be scheme, host and port only (such as https://pack.example.com), without a path',
      ],
    });
    // A company's own provider on a private network is accepted.
    await stack.patchSettings({ oauth: { ISSUER_URL: 'https://10.0.0.7:8443/realms/pack' } });
    await stack.patchSettings({ oauth: { ISSUER_URL: before.body.oauth.ISSUER_URL } });
    expect((await stack.call('GET', '/v1/core/general_settings/')).body.oauth).toEqual(before.body.oauth);
  });

  it('sends a sign-in the console started back to the console: the token in the fragment, a refusal too; only to a console page', async () => {
    const outside = await stack.call('GET', `${START}?return_to=${encodeURIComponent('//evil.example/x')}`, {
      token: null,
    });
    expect(outside.status).toBe(400);
    expect(outside.body.errors).toEqual({
      'query.return_to': ['must be / or a console page path such as /dashboard'],
    });

    await stack.patchSettings(oauth({ ISSUER_URL: '' }));
    const gap = await fetch(`${stack.gateway.url}${START}?return_to=%2Fsettings`, { redirect: 'manual' });
    expect(gap.status).toBe(302);
    const refused = new URLSearchParams(
      new URL(gap.headers.get('location')!, stack.gateway.url).hash.slice(1),
    );
    expect(Object.fromEntries(refused)).toEqual({
      error:
        'Sign-in through the identity provider is enabled but not usable: set oauth.ISSUER_URL in the general settings (Identity-provider OAuth).',
      next: '/settings',
    });

    await stack.patchSettings(oauth());
    const start = await fetch(`${stack.gateway.url}${START}?return_to=%2Fsettings`, { redirect: 'manual' });
    const gatewayCookie = start.headers.get('set-cookie')!.split(';')[0]!;
    // The provider's part as a browser does it, from the authorization URL this start answered.
    const flow = await browseToCallback(stack.gateway.url, 'sub-erin', stack.gateway.url, start);
    const back = await fetch(flow.callbackUrl, { headers: { cookie: gatewayCookie }, redirect: 'manual' });
    expect(back.status).toBe(302);
    const landing = new URL(back.headers.get('location')!, stack.gateway.url);
    expect(landing.pathname).toBe('/sign-in');
    const fragment = new URLSearchParams(landing.hash.slice(1));
    expect(fragment.get('next')).toBe('/settings');
    const me = await stack.call('GET', '/v1/core/me/', { token: fragment.get('token') });
    expect(me.body).toMatchObject({ username: 'erin', role: 'admin' });
  });

  it('never writes the client secret to the log', () => {
    expect(stack.log.text).toContain('signed in');
    expect(stack.log.text).not.toContain(CLIENT_SECRET);
    expect(stack.log.text).not.toContain('a-wrong-client-secret-000');
  });
});
