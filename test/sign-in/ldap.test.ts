import { Attribute, Change } from 'ldapts';
import { seededSecret, storedDocuments, waitFor } from '@pack/testkit';
import { startSignInStack, type SignInStack } from './harness';
import {
  addServiceAccount,
  freePort,
  loadDirectory,
  personDn,
  startSlapd,
  SUFFIX,
  type Slapd,
} from './slapd';

/**
 * Sign-in with a directory password against a real OpenLDAP server (Debian's slapd, started
 * here with a directory of its own), through the gateway, with the LDAP settings changed through
 * the general settings API while everything runs.
 */
const ROOT_PASSWORD = 'root-secret-7f3a';
const READER_PASSWORD = seededSecret('the BIND_PASSWORD', { prefix: 'reader-secret-' });
const PASSWORDS = {
  alice: 'alice-pw-5d2e',
  bob: 'bob-pw-0c4f',
  carol: 'carol-pw-88aa',
  dave: 'dave-pw-31f0',
};
const WRONG_PASSWORD = 'not-the-password-4471';
const LOGIN = '/v1/core/auth/login/';

describe('sign-in through LDAP', () => {
  let slapd: Slapd;
  let stack: SignInStack;
  let readerDn: string;

  const ldapSettings = (overrides: Record<string, unknown> = {}) => ({
    ldap: {
      ENABLED: true,
      SERVER_URI: slapd.uri,
      BIND_DN: readerDn,
      BIND_PASSWORD: READER_PASSWORD,
      USER_SEARCH_BASE_DN: `ou=people,${SUFFIX}`,
      GROUP_SEARCH_QUERY_BASE_DN: `ou=groups,${SUFFIX}`,
      ...overrides,
    },
  });
  const login = (username: string, password: string) =>
    stack.call('POST', LOGIN, { token: null, body: { username, password } });
  const stored = () => storedDocuments(stack.gateway);

  beforeAll(async () => {
    slapd = await startSlapd(ROOT_PASSWORD);
    await loadDirectory(
      slapd,
      [
        { uid: 'alice', password: PASSWORDS.alice, mail: 'alice@example.com' },
        { uid: 'bob', password: PASSWORDS.bob, mail: 'bob@example.com' },
        { uid: 'carol', password: PASSWORDS.carol },
        { uid: 'dave', password: PASSWORDS.dave },
      ],
      { 'pack-admins': ['alice'], owners: ['carol', 'bob'], staff: ['bob'] },
    );
    readerDn = await addServiceAccount(slapd, 'reader', READER_PASSWORD);
    stack = await startSignInStack({
      SIGNIN_ROLE_GROUPS: 'pack-admins=admin,owners=service_owner',
      SIGNIN_MAX_FAILURES: '50',
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await slapd?.stop();
  });

  it('is refused with a clear 403 while neither LDAP nor the identity provider is enabled, storing nothing', async () => {
    const before = await stored();
    expect(before.users).toHaveLength(1); // the admin of PACK_ADMIN_TOKEN
    const answer = await login('alice', PASSWORDS.alice);
    expect(answer.status).toBe(403);
    expect(answer.body.detail).toBe(
      'Sign-in is off: neither LDAP nor the identity provider is enabled in the general settings.',
    );
    expect(await stored()).toEqual(before);
  });

  it('answers an expiring token with the role of the directory groups, which works and can be revoked', async () => {
    await stack.patchSettings(ldapSettings());
    const answer = await login('alice', PASSWORDS.alice);
    expect(answer.status).toBe(200);
    expect(answer.body.user).toMatchObject({ username: 'alice', role: 'admin' });
    const lifetime = Date.parse(answer.body.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(8 * 3600_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(8 * 3600_000);

    // The token is an API token of alice's: an admin route answers it.
    const listed = await stack.call('GET', '/v1/core/tokens/?limit=100', { token: answer.body.token });
    expect(listed.status).toBe(200);
    const row = listed.body.results.find((token: { id: number }) => token.id === answer.body.id);
    expect(row).toMatchObject({
      user: { username: 'alice', role: 'admin' },
      expires_at: answer.body.expires_at,
    });
    const user = await stack.call('GET', `/v1/core/users/${answer.body.user.id}/`);
    expect(user.body).toMatchObject({ origin: 'ldap', email: 'alice@example.com' });

    expect((await stack.call('DELETE', `/v1/core/tokens/${answer.body.id}/`)).status).toBe(204);
    await waitFor(
      async () => (await stack.call('GET', '/v1/core/tokens/', { token: answer.body.token })).status === 401,
    );
  });

  it('signs out: the token revokes itself', async () => {
    const { token } = (await login('dave', PASSWORDS.dave)).body as { token: string };
    expect((await stack.call('GET', '/v1/core/general_settings/', { token })).status).toBe(200);
    expect((await stack.call('POST', '/v1/core/auth/logout/', { token })).status).toBe(204);
    expect((await stack.call('GET', '/v1/core/general_settings/', { token })).status).toBe(401);
  });

  it('maps the highest group to the role, and an account in no listed group gets the default role', async () => {
    expect((await login('bob', PASSWORDS.bob)).body.user.role).toBe('service_owner');
    expect((await login('dave', PASSWORDS.dave)).body.user.role).toBe('consumer');
  });

  it('answers the same 401 to a wrong password and to an unknown user, storing nothing', async () => {
    const before = await stored();
    const wrong = await login('carol', WRONG_PASSWORD);
    const unknown = await login('mallory', WRONG_PASSWORD);
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(unknown.body.detail).toBe(wrong.body.detail);
    expect(unknown.body.detail).toBe('Unknown user name or wrong password.');
    expect(await stored()).toEqual(before);
  });

  it('refuses a user removed from the directory, and one whose password was changed', async () => {
    expect((await login('carol', PASSWORDS.carol)).status).toBe(200);
    expect((await login('bob', PASSWORDS.bob)).status).toBe(200);
    const admin = await slapd.admin();
    try {
      await admin.del(personDn('carol'));
      await admin.modify(
        personDn('bob'),
        new Change({
          operation: 'replace',
          modification: new Attribute({ type: 'userPassword', values: ['bob-new-pw-7777'] }),
        }),
      );
    } finally {
      await admin.unbind();
    }
    expect((await login('carol', PASSWORDS.carol)).status).toBe(401);
    expect((await login('bob', PASSWORDS.bob)).status).toBe(401);
    expect((await login('bob', 'bob-new-pw-7777')).status).toBe(200);
  });

  it('slows repeated failures from one address with 429 and Retry-After, even for the right password', async () => {
    const replica = await stack.replica({ SIGNIN_MAX_FAILURES: '3', SIGNIN_FAILURE_WINDOW_SECONDS: '60' });
    const attempt = (password: string) =>
      fetch(`${replica.url}${LOGIN}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'dave', password }),
      });
    for (let i = 0; i < 3; i += 1) expect((await attempt(WRONG_PASSWORD)).status).toBe(401);
    const slowed = await attempt(PASSWORDS.dave);
    expect(slowed.status).toBe(429);
    expect(Number(slowed.headers.get('retry-after'))).toBeGreaterThan(0);
    // The other replica counts its own failures (docs/decisions/0016).
    expect((await login('dave', PASSWORDS.dave)).status).toBe(200);
  });

  it('reports a refused bind, an unreachable server and a TLS failure clearly, and each settings change applies to the next sign-in', async () => {
    await stack.patchSettings(
      ldapSettings({
        BIND_PASSWORD: seededSecret('a wrong BIND_PASSWORD', { prefix: 'a-wrong-bind-password-' }),
      }),
    );
    const badBind = await login('alice', PASSWORDS.alice);
    expect(badBind.status).toBe(502);
    expect(badBind.body.detail).toBe(
      `The LDAP server ${slapd.uri} refused the bind as BIND_DN; check BIND_DN and BIND_PASSWORD in the general settings.`,
    );

    const closed = `ldap://127.0.0.1:${await freePort()}`;
    await stack.patchSettings(ldapSettings({ SERVER_URI: closed }));
    const unreachable = await login('alice', PASSWORDS.alice);
    expect(unreachable.status).toBe(502);
    expect(unreachable.body.detail).toMatch(new RegExp(`^The LDAP server ${closed} is unreachable`));

    await stack.patchSettings(ldapSettings({ SERVER_URI: slapd.tlsUri }));
    const tls = await login('alice', PASSWORDS.alice);
    expect(tls.status).toBe(502);
    expect(tls.body.detail).toMatch(
      new RegExp(`^TLS with the LDAP server ${slapd.tlsUri} failed: .*SELF_SIGNED`),
    );

    // A second URI is tried when the first cannot be reached.
    await stack.patchSettings(ldapSettings({ SERVER_URI: `${closed} ${slapd.uri}` }));
    expect((await login('alice', PASSWORDS.alice)).status).toBe(200);

    await stack.patchSettings({ ldap: { ENABLED: false } });
    const off = await login('alice', PASSWORDS.alice);
    expect(off.status).toBe(403);
  });

  it('never writes a password to the log', () => {
    const text = stack.log.text;
    expect(text).toContain('LDAP sign-in refused'); // the log was captured
    for (const secret of [
      ...Object.values(PASSWORDS),
      'bob-new-pw-7777',
      WRONG_PASSWORD,
      READER_PASSWORD,
      'a-wrong-bind-password-0000',
    ])
      expect(text).not.toContain(secret);
  });
});
