import { ValidationError } from '@pack/errors';
import { decodeSettings } from './decode';
import type { SecretCodec, SettingsVersion } from './model';
import { planPatch, planReencryption } from './plan';
import { settingsView } from './view';

/** Reversible stand-in for the cipher: "sealed(<key>|<field>|<plaintext>)"; key "old" is retired, "gone" lost. */
const codec: SecretCodec = {
  seal: (group, field, plaintext) => `sealed(new|${group}.${field}|${plaintext})`,
  open: (group, field, stored) => {
    if (!stored.startsWith('sealed(')) return stored; // like the real codec: legacy plaintext reads as is
    const match = /^sealed\((\w+)\|([\w.]+)\|(.*)\)$/.exec(stored);
    if (!match || match[1] === 'gone' || match[2] !== `${group}.${field}`) return null;
    return match[3]!;
  },
  needsReseal: (stored) => !stored.startsWith('sealed(new|'),
};
/** What `run` throws; undefined when it does not throw, so the expectations after it fail. */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}
const version = (groups: SettingsVersion['groups']): SettingsVersion => ({ version: 3, groups });
const plan = (current: SettingsVersion, patch: Parameters<typeof planPatch>[2]) =>
  planPatch(current, decodeSettings(current.groups, codec), patch, codec);

describe('planPatch', () => {
  const current = version({
    ldap: { BIND_PASSWORD: 'sealed(new|ldap.BIND_PASSWORD|hunter2-hunter2)', BIND_DN: 'cn=a,dc=x' },
  });

  it('records only fields whose value changes, with old and new values for plain fields', () => {
    const planned = plan(current, {
      ldap: { BIND_DN: 'cn=a,dc=x', USER_SEARCH_BASE_DN: 'ou=people,dc=x' },
      currency: { currency: 'USD' },
    });
    expect(planned?.changes).toEqual([{ field: 'ldap.USER_SEARCH_BASE_DN', old: '', new: 'ou=people,dc=x' }]);
    expect(planned?.changedGroups).toEqual(['ldap']);
    expect(planned?.groups.ldap?.BIND_PASSWORD).toBe(current.groups.ldap!.BIND_PASSWORD);
  });

  it('keeps the stored secret when the masked value or the same plaintext comes back', () => {
    expect(plan(current, { ldap: { BIND_PASSWORD: '********ter2' } })).toBeNull();
    expect(plan(current, { ldap: { BIND_PASSWORD: '********' } })).toBeNull();
    expect(plan(current, { ldap: { BIND_PASSWORD: 'hunter2-hunter2' } })).toBeNull();
  });

  it('encrypts a new secret and records no value for it', () => {
    const planned = plan(current, { ldap: { BIND_PASSWORD: 'n3w-password' } });
    expect(planned?.changes).toEqual([{ field: 'ldap.BIND_PASSWORD', secret: true }]);
    expect(planned?.groups.ldap?.BIND_PASSWORD).toBe('sealed(new|ldap.BIND_PASSWORD|n3w-password)');
  });

  it('replaces a secret that no key can decrypt, even with what might be the same value', () => {
    const lost = version({ smtp: { EMAIL_HOST_PASSWORD: 'sealed(gone|smtp.EMAIL_HOST_PASSWORD|x)' } });
    expect(settingsView(decodeSettings(lost.groups, codec)).smtp.EMAIL_HOST_PASSWORD).toBe('********');
    expect(plan(lost, { smtp: { EMAIL_HOST_PASSWORD: '' } })?.changes).toEqual([
      { field: 'smtp.EMAIL_HOST_PASSWORD', secret: true },
    ]);
  });

  it('refuses to enable a group without its essentials, naming them, but only for touched groups', () => {
    expect(() => plan(current, { ldap: { ENABLED: true } })).toThrow(ValidationError);
    const refusal = thrown(() => plan(current, { oauth: { ENABLED: true, CLIENT_ID: 'id' } }));
    expect(refusal).toBeInstanceOf(ValidationError);
    expect((refusal as ValidationError).errors).toEqual({
      'oauth.CLIENT_SECRET': ['is required while oauth.ENABLED is true'],
    });
    expect(plan(current, { currency: { currency: 'EUR' } })?.changedGroups).toEqual(['currency']);
  });

  it('stores user JSON as text and records no value for it', () => {
    const planned = plan(current, {
      ai_integration: {
        generative_ui_catalog_schema: { $schema: 'http://json-schema.org/draft-07/schema#' },
      },
    });
    expect(planned?.groups.ai_integration?.generative_ui_catalog_schema).toBe(
      '{"$schema":"http://json-schema.org/draft-07/schema#"}',
    );
    expect(planned?.changes).toEqual([{ field: 'ai_integration.generative_ui_catalog_schema' }]);
  });
});

describe('decodeSettings', () => {
  it('falls back to the default for a stored value its schema no longer accepts, and says so', () => {
    const decoded = decodeSettings(
      { smtp: { EMAIL_PORT: 'not a number' }, currency: { currency: 'EUR' } },
      codec,
    );
    expect(decoded.settings.smtp.EMAIL_PORT).toBe(587);
    expect(decoded.settings.currency.currency).toBe('EUR');
    expect([...decoded.invalid]).toEqual(['smtp.EMAIL_PORT']);
  });

  it('derives show_ai_integration whatever was stored', () => {
    const decoded = decodeSettings(
      { ai_integration: { show_ai_processor: true, show_ai_integration: false } },
      codec,
    );
    expect(decoded.settings.ai_integration.show_ai_integration).toBe(true);
  });
});

describe('planReencryption', () => {
  it('re-encrypts secrets under a retired key or unencrypted, leaving lost ones and current ones alone', () => {
    const stored = version({
      ldap: { BIND_PASSWORD: 'sealed(old|ldap.BIND_PASSWORD|p1)' },
      smtp: { EMAIL_HOST_PASSWORD: 'sealed(gone|smtp.EMAIL_HOST_PASSWORD|p2)' },
      oauth: { CLIENT_ID: 'sealed(new|oauth.CLIENT_ID|p3)', CLIENT_SECRET: 'plain-legacy' },
    });
    const planned = planReencryption(stored, codec);
    expect(planned?.changes).toEqual([
      { field: 'ldap.BIND_PASSWORD', secret: true },
      { field: 'oauth.CLIENT_SECRET', secret: true },
    ]);
    expect(planned?.groups.ldap?.BIND_PASSWORD).toBe('sealed(new|ldap.BIND_PASSWORD|p1)');
    expect(planned?.groups.oauth?.CLIENT_SECRET).toBe('sealed(new|oauth.CLIENT_SECRET|plain-legacy)');
    expect(planned?.groups.smtp?.EMAIL_HOST_PASSWORD).toBe('sealed(gone|smtp.EMAIL_HOST_PASSWORD|p2)');
    expect(
      planReencryption(version({ oauth: { CLIENT_ID: 'sealed(new|oauth.CLIENT_ID|p3)' } }), codec),
    ).toBeNull();
  });
});
