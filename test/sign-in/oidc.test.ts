import { seededSecret, storedDocuments } from '@pack/testkit';
import { startSignInStack, type SignInStack } from './harness';
import { browseToCallback, reservePort, startOidcProvider, type OidcProvider } from './oidc-provider';

/**
 * Sign-in through a real OpenID provider (the oidc-provider package, on loopback): the
 * authorization-code flow with state, nonce and PKCE, through the gateway, with the client's
 * credentials taken from the general settings at each sign-in.
 */
const CLIENT_ID = 'pack-platform';
const CLIENT_SECRET = seededSecret('the CLIENT_SECRET', { prefix: 'client-secret-for-tests-' });
const START = '/v1/core/auth/oidc/login/';

describe('sign-in through the identity provider (OpenID Connect)', () => {
  let stack: SignInStack;
  let provider: OidcProvider;

  const oauth = (overrides: Record<string, unknown> = {}) => ({
    oauth: { ENABLED: true, CLIENT_ID, CLIENT_SECRET, ...overrides },
  });
  const finish = ({ callbackUrl, gatewayCookie }: { callbackUrl: string; gatewayCookie: string }) =>
    fetch(callbackUrl, { headers: { cookie: gatewayCookie } });

  beforeAll(async () => {
    const port = await reservePort();
    stack = await startSignInStack({
      OIDC_ISSUER_URL: `http://127.0.0.1:${port}`,
      SIGNIN_ROLE_GROUPS: 'platform-admins=admin,owners=service_owner',
    });
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

  it('reports an identity provider that cannot be reached', async () => {
    await stack.patchSettings(oauth());
    const closed = `http://127.0.0.1:${await reservePort()}`;
    const replica = await stack.replica({ OIDC_ISSUER_URL: closed });
    const answer = await fetch(`${replica.url}${START}`, { redirect: 'manual' });
    expect(answer.status).toBe(502);
    expect(((await answer.json()) as { detail: string }).detail).toMatch(
      new RegExp(`^The identity provider ${closed} is unreachable`),
    );
  });

  it('never writes the client secret to the log', () => {
    expect(stack.log.text).toContain('signed in');
    expect(stack.log.text).not.toContain(CLIENT_SECRET);
    expect(stack.log.text).not.toContain('a-wrong-client-secret-000');
  });
});
