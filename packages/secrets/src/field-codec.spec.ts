import { randomBytes } from 'node:crypto';
import { createKeyRing, fieldSecretCodec, SecretBox } from './index';

const logged: Array<Record<string, unknown>> = [];
const logger = { error: (fields: Record<string, unknown>) => void logged.push(fields) };
const k1 = randomBytes(32);
const k2 = randomBytes(32);

const codecOn = (ring = createKeyRing({ k1 }, 'k1'), plaintext: 'kept' | 'refused' = 'refused') =>
  fieldSecretCodec(ring, {
    context: (id: number, field) => `webhooks:${id}.${field}`,
    logFields: (id: number, field) => ({ webhook_id: id, field }),
    plaintext,
    logger,
  });

beforeEach(() => (logged.length = 0));

describe('fieldSecretCodec', () => {
  it('opens what it sealed for the same owner and field, and nothing for another', () => {
    const codec = codecOn();
    const stored = codec.seal(7, 'secret', 'whsec-plain');
    expect(stored).not.toContain('whsec-plain');
    expect(codec.open(7, 'secret', stored)).toBe('whsec-plain');
    expect(codec.open(8, 'secret', stored)).toBeNull();
    expect(codec.open(7, 'authorization', stored)).toBeNull();
    expect(logged).toHaveLength(2);
    expect(logged[0]).toMatchObject({ webhook_id: 8, field: 'secret', key_id: 'k1' });
  });

  it('binds the context it is given: a plain SecretBox with the same context opens it', () => {
    const ring = createKeyRing({ k1 }, 'k1');
    const stored = codecOn(ring).seal(3, 'authorization', 'Bearer abc');
    expect(new SecretBox(ring).decrypt(stored, 'webhooks:3.authorization')).toBe('Bearer abc');
  });

  it('reads a value stored before encryption as is when kept, as null when refused', () => {
    expect(codecOn(undefined, 'kept').open(1, 'secret', 'old-plain')).toBe('old-plain');
    expect(codecOn(undefined, 'refused').open(1, 'secret', 'old-plain')).toBeNull();
  });

  it('asks for a reseal of plaintext and of values under a retired key only', () => {
    const old = codecOn(createKeyRing({ k1 }, 'k1'));
    const current = codecOn(createKeyRing({ k1, k2 }, 'k2'));
    expect(current.needsReseal('old-plain')).toBe(true);
    expect(current.needsReseal(old.seal(1, 'secret', 'x'))).toBe(true);
    expect(current.needsReseal(current.seal(1, 'secret', 'x'))).toBe(false);
  });
});
