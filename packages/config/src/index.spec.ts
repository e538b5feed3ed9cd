import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig, serviceEnvSchema } from './index';

const schema = serviceEnvSchema({ port: 8082, database: 'pack_settings' });
const secret = 'x'.repeat(32);

describe('loadConfig', () => {
  it('applies defaults and coerces numbers', () => {
    const config = loadConfig(schema, { PACK_INTERNAL_SECRET: secret, PORT: '9000' });
    expect(config.PORT).toBe(9000);
    expect(config.MONGO_DB).toBe('pack_settings');
    expect(config.AMQP_URL).toBe('amqp://guest:guest@127.0.0.1:5672');
  });

  it('names every bad or missing variable', () => {
    let error: unknown;
    try {
      loadConfig(schema, { PORT: 'eighty', MONGO_URL: 'postgres://nope' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toContain('PORT');
    expect(message).toContain('MONGO_URL: must be a mongodb:// URL');
    expect(message).toContain('PACK_INTERNAL_SECRET');
  });

  it('reads NAME_FILE when NAME is unset (Kubernetes secrets as files)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pack-config-'));
    const file = path.join(dir, 'secret');
    writeFileSync(file, `${secret}\n`);
    expect(loadConfig(schema, { PACK_INTERNAL_SECRET_FILE: file }).PACK_INTERNAL_SECRET).toBe(secret);
    expect(() => loadConfig(schema, { PACK_INTERNAL_SECRET_FILE: path.join(dir, 'missing') })).toThrow(
      /PACK_INTERNAL_SECRET_FILE: cannot read/,
    );
  });

  it("AMQP_URL: one URL, or a cluster's nodes separated by commas, each an amqp:// URL", () => {
    const nodes = 'amqp://guest:guest@127.0.0.1:5681, amqp://guest:guest@127.0.0.1:5682';
    expect(loadConfig(schema, { PACK_INTERNAL_SECRET: secret, AMQP_URL: nodes }).AMQP_URL).toBe(nodes);
    for (const bad of ['amqp://a:5672,http://b:5672', 'amqp://a:5672,', 'rabbit:5672'])
      expect(() => loadConfig(schema, { PACK_INTERNAL_SECRET: secret, AMQP_URL: bad })).toThrow(
        /AMQP_URL: must be an amqp:\/\/ URL, or several separated by commas/,
      );
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig(schema, { PACK_INTERNAL_SECRET: secret, PORT: '' }).PORT).toBe(8082);
  });

  it('keeps idempotency markers a week unless told otherwise, and at least a day', () => {
    expect(loadConfig(schema, { PACK_INTERNAL_SECRET: secret }).PROCESSED_EVENTS_RETENTION_DAYS).toBe(7);
    const config = loadConfig(schema, {
      PACK_INTERNAL_SECRET: secret,
      PROCESSED_EVENTS_RETENTION_DAYS: '30',
    });
    expect(config.PROCESSED_EVENTS_RETENTION_DAYS).toBe(30);
    expect(() =>
      loadConfig(schema, { PACK_INTERNAL_SECRET: secret, PROCESSED_EVENTS_RETENTION_DAYS: '0' }),
    ).toThrow(/PROCESSED_EVENTS_RETENTION_DAYS/);
  });

  it('allows no private target ranges unless PACK_ALLOWED_TARGET_CIDRS names them', () => {
    expect(loadConfig(schema, { PACK_INTERNAL_SECRET: secret }).PACK_ALLOWED_TARGET_CIDRS).toEqual([]);
    const config = loadConfig(schema, {
      PACK_INTERNAL_SECRET: secret,
      PACK_ALLOWED_TARGET_CIDRS: '127.0.0.0/8, ::1/128',
    });
    expect(config.PACK_ALLOWED_TARGET_CIDRS.map((entry) => entry.cidr)).toEqual(['127.0.0.0/8', '::1/128']);
    expect(() =>
      loadConfig(schema, {
        PACK_INTERNAL_SECRET: secret,
        PACK_ALLOWED_TARGET_CIDRS: '127.0.0.0/8,10.0.0.0/33',
      }),
    ).toThrow(/PACK_ALLOWED_TARGET_CIDRS: "10.0.0.0\/33" is not a CIDR range/);
  });
});
