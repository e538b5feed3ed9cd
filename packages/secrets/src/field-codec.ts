import { isEncryptedSecret, SecretBox } from './secret-box';
import type { KeyRing } from './key-ring';

/** Encrypts and decrypts one secret field of one owner (a settings group, a model, a webhook). */
export interface FieldSecretCodec<Owner, Field extends string = string> {
  seal(owner: Owner, field: Field, plaintext: string): string;
  /** The plaintext, or null when the stored value cannot be decrypted (its key is gone). */
  open(owner: Owner, field: Field, stored: string): string | null;
  /** True when the stored value should be encrypted again (retired key, or not encrypted). */
  needsReseal(stored: string): boolean;
}

export interface FieldSecretCodecOptions<Owner, Field extends string> {
  /** Bound into the ciphertext, so a ciphertext copied to another owner or field does not decrypt. */
  context(owner: Owner, field: Field): string;
  /** What a failed decryption is logged with (the key id and the reason are added). */
  logFields(owner: Owner, field: Field): Record<string, unknown>;
  /**
   * A stored value that is not encrypted: `kept` reads it as is (stored before encryption existed,
   * re-encrypted at start), `refused` reads it as null.
   */
  plaintext: 'kept' | 'refused';
  logger: { error(fields: Record<string, unknown>, message: string): void };
}

/** One service's secret fields on the key ring: AES-256-GCM, each bound to its owner and field. */
export function fieldSecretCodec<Owner, Field extends string = string>(
  ring: KeyRing,
  options: FieldSecretCodecOptions<Owner, Field>,
): FieldSecretCodec<Owner, Field> {
  const box = new SecretBox(ring);
  return {
    seal: (owner, field, plaintext) => box.encrypt(plaintext, options.context(owner, field)),
    open: (owner, field, stored) => {
      if (!isEncryptedSecret(stored)) return options.plaintext === 'kept' ? stored : null;
      return box.decryptOrNull(stored, options.context(owner, field), (error) =>
        options.logger.error(
          { ...options.logFields(owner, field), key_id: error.keyId, reason: error.message },
          'stored secret cannot be decrypted',
        ),
      );
    },
    needsReseal: (stored) => !isEncryptedSecret(stored) || box.needsReencryption(stored),
  };
}
