import { seededSecret } from '@pack/testkit';
import { SETTINGS, SettingsHarness, startSettings, admin, consumer, owner } from './harness';

/** No role but admin sees any character of a secret in the masked settings. */
describe('masked secrets per role', () => {
  let settings: SettingsHarness;
  /** What every test starts from, and what a test that changes a secret puts back. */
  const SECRETS = {
    ldap: { BIND_PASSWORD: seededSecret('BIND_PASSWORD', { prefix: 'ldap-bind-secret-', suffix: '4711' }) },
    smtp: {
      EMAIL_HOST_PASSWORD: seededSecret('EMAIL_HOST_PASSWORD', {
        prefix: 'smtp-host-secret-',
        suffix: '0815',
      }),
    },
    oauth: {
      CLIENT_ID: seededSecret('CLIENT_ID', { prefix: 'oauth-client-id-', suffix: '2342' }),
      CLIENT_SECRET: seededSecret('CLIENT_SECRET', { prefix: 'oauth-client-secret-', suffix: '1337' }),
    },
  };
  beforeAll(async () => {
    settings = await startSettings();
    const patched = await settings.patch(SECRETS);
    expect(patched.status).toBe(200);
  });
  afterEach(async () => {
    // No test leaves a changed secret behind for the next one.
    const { body } = await settings.get(admin);
    expect([body.ldap.BIND_PASSWORD, body.smtp.EMAIL_HOST_PASSWORD, body.oauth.CLIENT_ID]).toEqual([
      '********4711',
      '********0815',
      '********2342',
    ]);
  });
  afterAll(async () => {
    await settings.stop();
  });

  it('shows admins the last four characters', async () => {
    const { status, body } = await settings.get(admin);
    expect(status).toBe(200);
    expect(body.ldap.BIND_PASSWORD).toBe('********4711');
    expect(body.smtp.EMAIL_HOST_PASSWORD).toBe('********0815');
    expect(body.oauth).toEqual({
      ENABLED: false,
      CLIENT_ID: '********2342',
      ISSUER_URL: '',
      REDIRECT_BASE_URL: '',
    });
  });

  it.each([
    ['service owners', owner],
    ['consumers', consumer],
  ])('shows %s the mask only', async (_who, principal) => {
    const { status, body } = await settings.get(principal);
    expect(status).toBe(200);
    expect(body.ldap.BIND_PASSWORD).toBe('********');
    expect(body.smtp.EMAIL_HOST_PASSWORD).toBe('********');
    expect(body.oauth).toEqual({
      ENABLED: false,
      CLIENT_ID: '********',
      ISSUER_URL: '',
      REDIRECT_BASE_URL: '',
    });
    const text = JSON.stringify(body);
    for (const tail of ['4711', '0815', '2342', '1337']) expect(text).not.toContain(tail);
    // Everything else reads as the admin reads it.
    const full = (await settings.get(admin)).body;
    expect(body).toEqual({
      ...full,
      ldap: { ...full.ldap, BIND_PASSWORD: '********' },
      smtp: { ...full.smtp, EMAIL_HOST_PASSWORD: '********' },
      oauth: { ...full.oauth, CLIENT_ID: '********' },
    });
  });

  it('gives the masked and the admin form different ETags, so a cache never mixes them', async () => {
    const masked = await settings.get(consumer);
    const full = await settings.get(admin);
    expect(masked.headers.get('etag')).not.toBe(full.headers.get('etag'));
    const revalidated = await settings.as(admin, 'GET', SETTINGS, undefined, {
      'if-none-match': masked.headers.get('etag')!,
    });
    expect(revalidated.status).toBe(200);
    expect(revalidated.body.ldap.BIND_PASSWORD).toBe('********4711');
    const same = await settings.as(owner, 'GET', SETTINGS, undefined, {
      'if-none-match': masked.headers.get('etag')!,
    });
    expect(same.status).toBe(304);
  });

  it('keeps an unset secret empty for every role', async () => {
    expect((await settings.patch({ smtp: { EMAIL_HOST_PASSWORD: '' } })).status).toBe(200);
    try {
      for (const principal of [admin, owner, consumer])
        expect((await settings.get(principal)).body.smtp.EMAIL_HOST_PASSWORD).toBe('');
    } finally {
      expect((await settings.patch({ smtp: SECRETS.smtp })).status).toBe(200);
    }
  });
});
