import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ConfigError, loadConfig } from '@pack/config';
import {
  createKeyRing,
  isEncryptedSecret,
  isMaskedSecret,
  keyRingFromEnv,
  maskSecret,
  SecretBox,
  SecretDecryptionError,
  secretKeyId,
  withEncryptionEnv,
} from './index';

const key = () => randomBytes(32);
const spec = (id: string, material: Buffer) => `${id}:${material.toString('base64')}`;

describe('SecretBox', () => {
  const k1 = key();
  const box = new SecretBox(createKeyRing({ k1 }, 'k1'));

  it('round-trips a secret, never storing its plaintext, with a fresh IV each time', () => {
    const stored = box.encrypt('correct horse battery staple', 'ldap.BIND_PASSWORD');
    expect(stored).toMatch(/^enc:v1:k1:[\w-]+:[\w-]+:[\w-]+$/);
    expect(stored).not.toContain('horse');
    expect(isEncryptedSecret(stored)).toBe(true);
    expect(secretKeyId(stored)).toBe('k1');
    expect(box.encrypt('correct horse battery staple', 'ldap.BIND_PASSWORD')).not.toBe(stored);
    expect(box.decrypt(stored, 'ldap.BIND_PASSWORD')).toBe('correct horse battery staple');
  });

  it('refuses a tampered value and a value moved to another field', () => {
    const stored = box.encrypt('s3cret-value', 'smtp.EMAIL_HOST_PASSWORD');
    const parts = stored.split(':');
    const ciphertext = Buffer.from(parts[4]!, 'base64url');
    ciphertext[0] = ciphertext[0]! ^ 1;
    parts[4] = ciphertext.toString('base64url');
    expect(() => box.decrypt(parts.join(':'), 'smtp.EMAIL_HOST_PASSWORD')).toThrow(SecretDecryptionError);
    expect(() => box.decrypt(stored, 'ldap.BIND_PASSWORD')).toThrow(SecretDecryptionError);
    expect(() => box.decrypt('plain text')).toThrow(SecretDecryptionError);
  });

  it('decryptOrNull: the plaintext, or null with the reason for a value that does not decrypt', () => {
    const stored = box.encrypt('s3cret-value', 'smtp.EMAIL_HOST_PASSWORD');
    const reasons: string[] = [];
    const heard = (error: SecretDecryptionError) => reasons.push(error.message);
    expect(box.decryptOrNull(stored, 'smtp.EMAIL_HOST_PASSWORD', heard)).toBe('s3cret-value');
    expect(reasons).toEqual([]);
    expect(box.decryptOrNull(stored, 'ldap.BIND_PASSWORD', heard)).toBeNull();
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/does not authenticate/);
  });

  it('rotates: a new active key encrypts, the old one still decrypts until removed', () => {
    const k2 = key();
    const old = box.encrypt('rotate-me-please');
    const rotated = new SecretBox(createKeyRing({ k1, k2 }, 'k2'));
    expect(rotated.decrypt(old)).toBe('rotate-me-please');
    expect(rotated.needsReencryption(old)).toBe(true);
    const fresh = rotated.encrypt('rotate-me-please');
    expect(secretKeyId(fresh)).toBe('k2');
    expect(rotated.needsReencryption(fresh)).toBe(false);
    const withoutOld = new SecretBox(createKeyRing({ k2 }, 'k2'));
    expect(() => withoutOld.decrypt(old)).toThrow(/no key "k1"/);
  });
});

describe('maskSecret', () => {
  it('shows at most the last 4 characters, and none of a short secret', () => {
    expect(maskSecret('')).toBe('');
    expect(maskSecret('short')).toBe('********');
    expect(maskSecret('a-long-enough-secret')).toBe('********cret');
    expect(isMaskedSecret(maskSecret('a-long-enough-secret'))).toBe(true);
    expect(isMaskedSecret(maskSecret('short'))).toBe(true);
    expect(isMaskedSecret('a-new-password')).toBe(false);
    expect(isMaskedSecret('********too-long')).toBe(false);
  });
});

describe('encryption environment', () => {
  const schema = withEncryptionEnv(z.object({ OTHER: z.string().default('x') }));
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig(schema, env);
      return [];
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      return error.problems;
    }
  };

  it('builds the key ring; the only key is active when no id is given', () => {
    const a = key();
    const b = key();
    const one = keyRingFromEnv(loadConfig(schema, { PACK_ENCRYPTION_KEYS: spec('a', a) }));
    expect(one.activeKeyId).toBe('a');
    const two = keyRingFromEnv(
      loadConfig(schema, {
        PACK_ENCRYPTION_KEYS: `${spec('a', a)}, ${spec('b', b)}`,
        PACK_ENCRYPTION_KEY_ID: 'b',
      }),
    );
    expect(two.activeKeyId).toBe('b');
    expect(two.keys.get('a')?.equals(a)).toBe(true);
  });

  it('stops start naming the variable, never echoing key material', () => {
    const material = randomBytes(16).toString('base64');
    const short = problems({ PACK_ENCRYPTION_KEYS: `k:${material}` });
    expect(short).toEqual([expect.stringMatching(/^PACK_ENCRYPTION_KEYS: key "k" must be 32 random bytes/)]);
    expect(short.join()).not.toContain(material);
    expect(problems({})).toEqual([expect.stringMatching(/^PACK_ENCRYPTION_KEYS: is required/)]);
    expect(problems({ PACK_ENCRYPTION_KEYS: 'no-colon' })[0]).toMatch(
      /^PACK_ENCRYPTION_KEYS: entry 1 must look like kid:base64/,
    );
    expect(problems({ PACK_ENCRYPTION_KEYS: `${spec('a', key())},${spec('a', key())}` })[0]).toMatch(
      /appears twice/,
    );
    expect(problems({ PACK_ENCRYPTION_KEYS: spec('a', key()), PACK_ENCRYPTION_KEY_ID: 'b' })).toEqual([
      'PACK_ENCRYPTION_KEY_ID: names no key of PACK_ENCRYPTION_KEYS',
    ]);
    expect(problems({ PACK_ENCRYPTION_KEYS: `${spec('a', key())},${spec('b', key())}` })[0]).toMatch(
      /^PACK_ENCRYPTION_KEY_ID: is required/,
    );
  });
});
