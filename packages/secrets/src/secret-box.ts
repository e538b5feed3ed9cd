import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { KeyRing } from './key-ring';

/**
 * Stored format of an encrypted secret: `enc:v1:<kid>:<iv>:<ciphertext>:<tag>` (base64url
 * parts). It names the key it was encrypted with, so keys can rotate: a new active key encrypts
 * from now on while older ones still decrypt what they wrote.
 */
const PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const ALGORITHM = 'aes-256-gcm';

export class SecretDecryptionError extends Error {
  constructor(
    message: string,
    readonly keyId?: string,
  ) {
    super(message);
    this.name = 'SecretDecryptionError';
  }
}

export function isEncryptedSecret(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(PREFIX);
}

/** The key id an encrypted value names, or undefined when it is not in the stored format. */
export function secretKeyId(stored: string): string | undefined {
  return isEncryptedSecret(stored) ? stored.slice(PREFIX.length).split(':')[0] : undefined;
}

/**
 * AES-256-GCM with a fresh 96-bit IV per value. `context` is bound as additional authenticated
 * data: a ciphertext copied to another field (another context) no longer decrypts.
 */
export class SecretBox {
  constructor(private readonly ring: KeyRing) {}

  get activeKeyId(): string {
    return this.ring.activeKeyId;
  }

  encrypt(plaintext: string, context = ''): string {
    const key = this.ring.keys.get(this.ring.activeKeyId);
    if (!key) throw new Error(`active key ${this.ring.activeKeyId} is missing from the key ring`);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const parts = [iv, ciphertext, cipher.getAuthTag()].map((part) => part.toString('base64url'));
    return `${PREFIX}${this.ring.activeKeyId}:${parts.join(':')}`;
  }

  decrypt(stored: string, context = ''): string {
    if (!isEncryptedSecret(stored)) throw new SecretDecryptionError('value is not an encrypted secret');
    const [keyId, iv, ciphertext, tag, ...rest] = stored.slice(PREFIX.length).split(':');
    if (!keyId || iv === undefined || ciphertext === undefined || tag === undefined || rest.length > 0) {
      throw new SecretDecryptionError('encrypted secret is malformed');
    }
    const key = this.ring.keys.get(keyId);
    if (!key) throw new SecretDecryptionError(`no key "${keyId}" in the key ring`, keyId);
    try {
      const decipher = createDecipheriv(ALGORITHM, key, Buffer.from(iv, 'base64url'), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(ciphertext, 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new SecretDecryptionError(
        `secret does not authenticate under key "${keyId}" (tampered, or another field's value)`,
        keyId,
      );
    }
  }

  /**
   * The plaintext, or null when the value does not decrypt (a lost key, tampering, another
   * field's ciphertext): `unreadable` hears why, so the caller can log it; other errors throw.
   * A service keeps answering with the secret shown as unset instead of failing every read.
   */
  decryptOrNull(
    stored: string,
    context: string,
    unreadable: (error: SecretDecryptionError) => void,
  ): string | null {
    try {
      return this.decrypt(stored, context);
    } catch (error) {
      if (!(error instanceof SecretDecryptionError)) throw error;
      unreadable(error);
      return null;
    }
  }

  /** True when the value was encrypted with a key other than the active one. */
  needsReencryption(stored: string): boolean {
    const keyId = secretKeyId(stored);
    return keyId !== undefined && keyId !== this.ring.activeKeyId;
  }
}
