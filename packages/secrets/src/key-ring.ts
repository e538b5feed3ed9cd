import { z } from 'zod';

export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
export const KEY_BYTES = 32;

/** The keys a service can decrypt with, and the one it encrypts with. */
export interface KeyRing {
  readonly activeKeyId: string;
  readonly keys: ReadonlyMap<string, Buffer>;
}

export class KeyRingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyRingError';
  }
}

export function createKeyRing(
  keys: ReadonlyMap<string, Buffer> | Record<string, Buffer>,
  activeKeyId: string,
): KeyRing {
  const map = new Map<string, Buffer>(
    keys instanceof Map ? [...(keys as ReadonlyMap<string, Buffer>)] : Object.entries(keys),
  );
  for (const [id, key] of map) {
    if (!KEY_ID_PATTERN.test(id))
      throw new KeyRingError(`key id "${id}" must match ${KEY_ID_PATTERN.source}`);
    if (key.length !== KEY_BYTES)
      throw new KeyRingError(`key "${id}" must be ${KEY_BYTES} bytes, got ${key.length}`);
  }
  if (!map.has(activeKeyId)) throw new KeyRingError(`active key id "${activeKeyId}" is not in the key ring`);
  return { activeKeyId, keys: map };
}

/** Parses `kid:base64,kid:base64`; problems are described without ever echoing key material. */
function parseKeyList(value: string, ctx: z.RefinementCtx): Map<string, Buffer> {
  const keys = new Map<string, Buffer>();
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0)
    ctx.addIssue({ code: 'custom', message: 'must list at least one key as kid:base64' });
  entries.forEach((entry, index) => {
    const colon = entry.indexOf(':');
    const id = colon > 0 ? entry.slice(0, colon) : '';
    const material = colon > 0 ? entry.slice(colon + 1) : '';
    if (!KEY_ID_PATTERN.test(id)) {
      ctx.addIssue({
        code: 'custom',
        message: `entry ${index + 1} must look like kid:base64 with kid matching ${KEY_ID_PATTERN.source}`,
      });
      return;
    }
    if (keys.has(id)) {
      ctx.addIssue({ code: 'custom', message: `key id "${id}" appears twice` });
      return;
    }
    const normalized = material.replace(/-/g, '+').replace(/_/g, '/');
    const key = /^[A-Za-z0-9+/]+={0,2}$/.test(normalized)
      ? Buffer.from(normalized, 'base64')
      : Buffer.alloc(0);
    if (key.length !== KEY_BYTES) {
      ctx.addIssue({
        code: 'custom',
        message: `key "${id}" must be ${KEY_BYTES} random bytes in base64 (openssl rand -base64 32)`,
      });
      return;
    }
    keys.set(id, key);
  });
  return keys;
}

/**
 * Environment variables of a service that keeps secrets at rest; spread into the service's env
 * schema with `withEncryptionEnv`. `PACK_ENCRYPTION_KEYS` holds every key still needed to
 * decrypt (old ones stay until their secrets are re-encrypted); `PACK_ENCRYPTION_KEY_ID` names
 * the one new secrets are encrypted with (optional when there is only one key).
 */
export const encryptionEnvShape = {
  /** `kid:base64-of-32-bytes[,kid:...]`: every AES-256-GCM key still needed to decrypt stored secrets. */
  PACK_ENCRYPTION_KEYS: z
    .string({ error: 'is required: comma-separated kid:base64-of-32-bytes' })
    .transform(parseKeyList),
  /** The key new secrets are encrypted with (rotation); optional with a single key. */
  PACK_ENCRYPTION_KEY_ID: z.string().regex(KEY_ID_PATTERN, `must match ${KEY_ID_PATTERN.source}`).optional(),
};

export interface EncryptionEnv {
  PACK_ENCRYPTION_KEYS: Map<string, Buffer>;
  PACK_ENCRYPTION_KEY_ID?: string | undefined;
}

/** Adds the encryption variables to a service env schema, checking that the active key exists. */
export function withEncryptionEnv<Shape extends z.core.$ZodShape>(
  schema: z.ZodObject<Shape>,
): z.ZodObject<Shape & typeof encryptionEnvShape> {
  const extended = schema.extend(encryptionEnvShape) as unknown as z.ZodObject<
    Shape & typeof encryptionEnvShape
  >;
  return extended.superRefine((env, ctx) => {
    const { PACK_ENCRYPTION_KEYS: keys, PACK_ENCRYPTION_KEY_ID: active } = env as unknown as EncryptionEnv;
    if (active === undefined && keys.size > 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['PACK_ENCRYPTION_KEY_ID'],
        message: 'is required when PACK_ENCRYPTION_KEYS lists several keys',
      });
    } else if (active !== undefined && !keys.has(active)) {
      ctx.addIssue({
        code: 'custom',
        path: ['PACK_ENCRYPTION_KEY_ID'],
        message: `names no key of PACK_ENCRYPTION_KEYS`,
      });
    }
  });
}

export function keyRingFromEnv(env: EncryptionEnv): KeyRing {
  const active = env.PACK_ENCRYPTION_KEY_ID ?? [...env.PACK_ENCRYPTION_KEYS.keys()][0];
  if (active === undefined) throw new KeyRingError('PACK_ENCRYPTION_KEYS lists no key');
  return createKeyRing(env.PACK_ENCRYPTION_KEYS, active);
}
