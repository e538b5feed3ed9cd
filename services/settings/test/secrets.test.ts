import { randomBytes } from 'node:crypto';
import { ConfigError, loadConfig } from '@pack/config';
import { systemPrincipal } from '@pack/contracts';
import { createKeyRing, SecretBox, secretKeyId } from '@pack/secrets';
import { LogCapture, runEntryPoint, seededSecret, TEST_ENCRYPTION_KEY, testEnv } from '@pack/testkit';
import { settingsEnvSchema, settingsSecretContext } from '../src/service';
import { SETTINGS, SettingsHarness, startSettings, admin, consumer, type StoredVersion } from './harness';

const secrets = {
  BIND_PASSWORD: seededSecret('BIND_PASSWORD', { prefix: 'ldap-bind-PLAINTEXT-', suffix: '4711' }),
  EMAIL_HOST_PASSWORD: seededSecret('EMAIL_HOST_PASSWORD', { prefix: 'smtp-PLAINTEXT-pass', suffix: 'word' }),
  CLIENT_ID: seededSecret('CLIENT_ID', { prefix: 'oauth-client-PLAINTEXT-', suffix: 'T-id' }),
  CLIENT_SECRET: seededSecret('CLIENT_SECRET', { prefix: 'oauth-client-PLAINTEXT-secret-' }),
};
const patchAll = {
  ldap: { BIND_PASSWORD: secrets.BIND_PASSWORD },
  smtp: { EMAIL_HOST_PASSWORD: secrets.EMAIL_HOST_PASSWORD },
  oauth: { CLIENT_ID: secrets.CLIENT_ID, CLIENT_SECRET: secrets.CLIENT_SECRET },
};
const testBox = new SecretBox(createKeyRing({ test: Buffer.from(TEST_ENCRYPTION_KEY, 'base64') }, 'test'));
const latest = (documents: StoredVersion[]) => documents.reduce((a, b) => (a._id > b._id ? a : b));

describe('secret settings', () => {
  // A service of its own per test: each test writes the secrets it reads.
  let settings: SettingsHarness;
  let logs: LogCapture;
  beforeEach(async () => {
    logs = new LogCapture();
    settings = await startSettings({ env: { LOG_LEVEL: 'debug' }, logDestination: logs });
  });
  afterEach(async () => {
    await settings.stop();
  });

  it('are encrypted at rest with the key id: no collection holds a plaintext', async () => {
    expect((await settings.patch(patchAll)).status).toBe(200);
    await settings.service.context.outbox.flush();
    const dump = JSON.stringify(await settings.rawDatabase());
    for (const plaintext of Object.values(secrets)) expect(dump).not.toContain(plaintext);
    expect(dump).not.toContain('PLAINTEXT');
    const stored = latest(await settings.versionDocuments()).groups!;
    for (const value of [
      stored.ldap!.BIND_PASSWORD,
      stored.smtp!.EMAIL_HOST_PASSWORD,
      stored.oauth!.CLIENT_ID,
      stored.oauth!.CLIENT_SECRET,
    ]) {
      expect(value).toMatch(/^enc:v1:test:/);
    }
    expect(
      testBox.decrypt(stored.ldap!.BIND_PASSWORD as string, settingsSecretContext('ldap', 'BIND_PASSWORD')),
    ).toBe(secrets.BIND_PASSWORD);
  });

  it("are answered in plaintext to the platform's own services only; a user, even an admin, gets 404", async () => {
    expect((await settings.patch(patchAll)).status).toBe(200);
    const path = `${SETTINGS}plaintext/`;
    for (const user of [admin, consumer]) expect((await settings.as(user, 'GET', path)).status).toBe(404);
    const service = await settings.as(systemPrincipal('gateway'), 'GET', path);
    expect(service.status).toBe(200);
    expect(service.body.ldap.BIND_PASSWORD).toBe(secrets.BIND_PASSWORD);
    expect(service.body.oauth.CLIENT_SECRET).toBe(secrets.CLIENT_SECRET);
    const again = await settings.as(systemPrincipal('gateway'), 'GET', path, undefined, {
      'if-none-match': service.headers.get('etag')!,
    });
    expect(again.status).toBe(304);
    expect(logs.text).not.toContain('PLAINTEXT');
  });

  it('never reach the logs', async () => {
    expect((await settings.patch(patchAll)).status).toBe(200);
    expect((await settings.get(consumer)).status).toBe(200);
    await settings.service.context.outbox.flush();
    expect(logs.text).toContain('general settings read');
    expect(logs.text).not.toContain('PLAINTEXT');
  });

  it('are masked on read and CLIENT_SECRET is never returned, to admins included', async () => {
    expect((await settings.patch(patchAll)).status).toBe(200);
    // Other roles see no character of a secret: secret-masks.test.ts.
    const { body } = await settings.get(admin);
    expect(body.ldap.BIND_PASSWORD).toBe('********4711');
    expect(body.smtp.EMAIL_HOST_PASSWORD).toBe('********word');
    expect(body.oauth).toEqual({
      ENABLED: false,
      CLIENT_ID: '********T-id',
      ISSUER_URL: '',
      REDIRECT_BASE_URL: '',
    });
    expect(JSON.stringify(body)).not.toContain('PLAINTEXT');
    const patched = await settings.patch({
      oauth: {
        CLIENT_SECRET: seededSecret('another CLIENT_SECRET', { prefix: 'oauth-client-PLAINTEXT-secret-' }),
      },
    });
    expect(patched.body.oauth).not.toHaveProperty('CLIENT_SECRET');
  });

  it('keep their stored value when a form sends the masked value back', async () => {
    expect((await settings.patch(patchAll)).status).toBe(200);
    const before = latest(await settings.versionDocuments()).groups!;
    const { body: view } = await settings.get();
    const sentBack = await settings.patch({
      ldap: { ...view.ldap, BIND_DN: 'cn=reader,dc=example,dc=com' },
      smtp: view.smtp,
      oauth: view.oauth,
    });
    expect(sentBack.status).toBe(200);
    expect(sentBack.body.ldap.BIND_DN).toBe('cn=reader,dc=example,dc=com');
    const after = latest(await settings.versionDocuments()).groups!;
    expect(after.ldap!.BIND_PASSWORD).toBe(before.ldap!.BIND_PASSWORD);
    expect(after.oauth!.CLIENT_ID).toBe(before.oauth!.CLIENT_ID);
    expect(
      testBox.decrypt(after.ldap!.BIND_PASSWORD as string, settingsSecretContext('ldap', 'BIND_PASSWORD')),
    ).toBe(secrets.BIND_PASSWORD);
    expect((await settings.get()).body.ldap.BIND_PASSWORD).toBe('********4711');
  });

  it('change when a new value is sent, and clear with an empty string', async () => {
    await settings.patch({
      ldap: {
        BIND_PASSWORD: seededSecret('another BIND_PASSWORD', {
          prefix: 'another-PLAINTEXT-pw-',
          suffix: '9999',
        }),
      },
    });
    expect((await settings.get()).body.ldap.BIND_PASSWORD).toBe('********9999');
    await settings.patch({ ldap: { BIND_PASSWORD: '' } });
    expect((await settings.get()).body.ldap.BIND_PASSWORD).toBe('');
    expect(latest(await settings.versionDocuments()).groups!.ldap!.BIND_PASSWORD).toBe('');
  });

  it('can enable OAuth once both its secrets are set (the write-only one counts though never shown)', async () => {
    expect((await settings.patch(patchAll)).status).toBe(200);
    const enabled = await settings.patch({ oauth: { ENABLED: true } });
    expect(enabled.status).toBe(200);
    expect(enabled.body.oauth.ENABLED).toBe(true);
    const cleared = await settings.patch({ oauth: { CLIENT_SECRET: '' } });
    expect(cleared.status).toBe(400);
    expect(cleared.body.errors).toEqual({
      'oauth.CLIENT_SECRET': ['is required while oauth.ENABLED is true'],
    });
  });
});

describe('encryption keys', () => {
  const keyA = randomBytes(32).toString('base64');
  const keyB = randomBytes(32).toString('base64');

  it('rotate: after a restart with a new active key, secrets are re-encrypted under it and still read back', async () => {
    const first = await startSettings({
      env: {
        PACK_ENCRYPTION_KEYS: `a:${keyA}`,
        PACK_ENCRYPTION_KEY_ID: 'a',
      },
    });
    let current = first;
    try {
      await first.patch({
        smtp: {
          EMAIL_HOST_PASSWORD: seededSecret('a rotated EMAIL_HOST_PASSWORD', {
            prefix: 'rotating-PLAINTEXT-',
            suffix: '1234',
          }),
        },
      });
      expect(
        secretKeyId(latest(await first.versionDocuments()).groups!.smtp!.EMAIL_HOST_PASSWORD as string),
      ).toBe('a');
      await first.stop({ keepData: true });

      current = await first.replica({
        env: {
          PACK_ENCRYPTION_KEYS: `a:${keyA},b:${keyB}`,
          PACK_ENCRYPTION_KEY_ID: 'b',
        },
      });
      const rotated = latest(await current.versionDocuments());
      expect(rotated.action).toBe('reencrypt');
      expect(rotated.changes).toEqual([{ field: 'smtp.EMAIL_HOST_PASSWORD', secret: true }]);
      expect(secretKeyId(rotated.groups!.smtp!.EMAIL_HOST_PASSWORD as string)).toBe('b');
      expect((await current.get()).body.smtp.EMAIL_HOST_PASSWORD).toBe('********1234');
      await current.stop({ keepData: true });

      current = await first.replica({
        env: { PACK_ENCRYPTION_KEYS: `b:${keyB}`, PACK_ENCRYPTION_KEY_ID: 'b' },
      });
      expect((await current.get()).body.smtp.EMAIL_HOST_PASSWORD).toBe('********1234');
      expect(JSON.stringify(await current.rawDatabase())).not.toContain('PLAINTEXT');
    } finally {
      await current.stop();
    }
  });

  it('a secret whose key is gone reads as a bare mask, the rest still works, and a new value replaces it', async () => {
    const first = await startSettings({
      env: {
        PACK_ENCRYPTION_KEYS: `a:${keyA}`,
        PACK_ENCRYPTION_KEY_ID: '',
      },
    });
    let current = first;
    try {
      await first.patch({
        ldap: {
          BIND_PASSWORD: seededSecret('a BIND_PASSWORD under a lost key', {
            prefix: 'lost-key-PLAINTEXT-',
            suffix: '0000',
          }),
        },
        currency: { currency: 'EUR' },
      });
      await first.stop({ keepData: true });
      current = await first.replica({
        env: { PACK_ENCRYPTION_KEYS: `b:${keyB}`, PACK_ENCRYPTION_KEY_ID: 'b' },
      });
      const { status, body } = await current.get();
      expect(status).toBe(200);
      expect(body.ldap.BIND_PASSWORD).toBe('********');
      expect(body.currency.currency).toBe('EUR');
      await current.patch({
        ldap: {
          BIND_PASSWORD: seededSecret('a BIND_PASSWORD under a new key', {
            prefix: 'new-key-PLAINTEXT-',
            suffix: '5678',
          }),
        },
      });
      expect((await current.get()).body.ldap.BIND_PASSWORD).toBe('********5678');
    } finally {
      await current.stop();
    }
  });

  it('a bad key stops the service at start, naming the variable and not echoing the key', async () => {
    const short = randomBytes(16).toString('base64');
    const problems = (overrides: Record<string, string>) => {
      try {
        loadConfig(settingsEnvSchema, testEnv('settings', overrides));
        return [];
      } catch (error) {
        return error instanceof ConfigError ? error.problems : [String(error)];
      }
    };
    expect(problems({ PACK_ENCRYPTION_KEYS: `k:${short}` })).toEqual([
      expect.stringMatching(/^PACK_ENCRYPTION_KEYS: key "k" must be 32/),
    ]);
    expect(problems({ PACK_ENCRYPTION_KEY_ID: 'missing' })).toEqual([
      'PACK_ENCRYPTION_KEY_ID: names no key of PACK_ENCRYPTION_KEYS',
    ]);

    const env: Record<string, string | undefined> = {
      ...testEnv('settings'),
      PACK_ENCRYPTION_KEYS: `k:${short}`,
    };
    delete env.PACK_ENCRYPTION_KEY_ID;
    const run = await runEntryPoint('services/settings/src/main.ts', [], env);
    expect(run.status).toBe(78);
    expect(run.stderr).toContain('PACK_ENCRYPTION_KEYS');
    expect(run.stderr).not.toContain(short);
  });
});

it('the settings path is the one of the spec', () => {
  expect(SETTINGS).toBe('/v1/core/general_settings/');
});
