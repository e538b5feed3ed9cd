import { buildGenUiCatalogSchema } from '@pack/contracts';
import { seededSecret, uniqueName, waitFor } from '@pack/testkit';
import { startSubscriber } from '../../services/settings/test/subscriber';
import { startStack, type Stack } from '../stack';

const SETTINGS = '/v1/core/general_settings/';

describe('general settings through the gateway', () => {
  let stack: Stack;
  let ownerToken: string;
  let consumerToken: string;
  beforeAll(async () => {
    stack = await startStack();
    ownerToken = await stack.issueToken('service_owner');
    consumerToken = await stack.issueToken('consumer');
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** The settings service behind the gateway. */
  const settingsService = () => {
    const service = stack.service('settings');
    return {
      url: service.url,
      config: service.context.config as { BROKER_NAMESPACE: string; AMQP_URL: string },
    };
  };

  /** The settings version now, and a currency other than the current one (so a PATCH changes something). */
  const current = async () => {
    const { body, headers } = await stack.call('GET', SETTINGS);
    const currency = body.currency.currency as string;
    return {
      version: Number(headers.get('x-settings-version')),
      currency,
      other: currency === 'EUR' ? 'GBP' : 'EUR',
    };
  };

  it('an admin changes settings and every signed-in user reads them, secrets masked', async () => {
    const before = await current();
    const patched = await stack.call('PATCH', SETTINGS, {
      body: {
        currency: { currency: 'EUR' },
        smtp: {
          ENABLED: true,
          EMAIL_HOST: 'smtp.example.com',
          EMAIL_HOST_PASSWORD: seededSecret('EMAIL_HOST_PASSWORD', {
            prefix: 'e2e-smtp-PLAINTEXT-',
            suffix: 'T-pw',
          }),
        },
        oauth: {
          CLIENT_ID: seededSecret('CLIENT_ID', { prefix: 'e2e-client-id-PLAINTEXT-', suffix: 'TEXT' }),
          CLIENT_SECRET: seededSecret('CLIENT_SECRET', { prefix: 'e2e-client-secret-PLAINTEXT-' }),
        },
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.headers.get('x-settings-version')).toBe(String(before.version + 1));
    for (const token of [consumerToken, ownerToken, stack.adminToken]) {
      const { status, body, headers } = await stack.call('GET', SETTINGS, { token });
      expect(status).toBe(200);
      expect(headers.get('x-settings-version')).toBe(String(before.version + 1));
      expect(body.currency).toEqual({ ENABLED: true, currency: 'EUR' });
      // Only an admin sees the last four characters of a secret.
      const admin = token === stack.adminToken;
      expect(body.smtp).toMatchObject({
        ENABLED: true,
        EMAIL_HOST: 'smtp.example.com',
        EMAIL_HOST_PASSWORD: admin ? '********T-pw' : '********',
      });
      expect(body.oauth).toEqual({
        ENABLED: false,
        CLIENT_ID: admin ? '********TEXT' : '********',
        ISSUER_URL: '',
        REDIRECT_BASE_URL: '',
      });
      expect(JSON.stringify(body)).not.toContain('PLAINTEXT');
    }
  });

  it('refuses changes from service owners and consumers (403) and from nobody (401), storing nothing', async () => {
    const before = (await stack.call('GET', SETTINGS)).body;
    for (const token of [ownerToken, consumerToken]) {
      const { status, body, headers } = await stack.call('PATCH', SETTINGS, {
        token,
        body: { currency: { currency: 'GBP' } },
      });
      expect(status).toBe(403);
      expect(headers.get('content-type')).toContain('application/problem+json');
      expect(body).toMatchObject({ status: 403 });
    }
    expect(
      (await stack.call('PATCH', SETTINGS, { token: null, body: { currency: { currency: 'GBP' } } })).status,
    ).toBe(401);
    expect((await stack.call('GET', SETTINGS)).body).toEqual(before);
  });

  it('answers bad input with 400 problem+json naming the field, storing nothing', async () => {
    const before = await stack.call('GET', SETTINGS);
    const cases: [unknown, string][] = [
      [{ unknown_group: {} }, 'unknown_group'],
      [{ smtp: { EMAIL_PORTS: 25 } }, 'smtp.EMAIL_PORTS'],
      [{ smtp: { EMAIL_PORT: 'twenty-five' } }, 'smtp.EMAIL_PORT'],
      [{ gui_table: { table_refresh_interval: 100_000 } }, 'gui_table.table_refresh_interval'],
      [{ ai_integration: { show_ai_integration: true } }, 'ai_integration.show_ai_integration'],
      [{ currency: { currency: 'CHF' } }, 'currency.currency'],
    ];
    for (const [body, field] of cases) {
      const answer = await stack.call('PATCH', SETTINGS, { body });
      expect(answer.status).toBe(400);
      expect(answer.headers.get('content-type')).toContain('application/problem+json');
      expect(Object.keys(answer.body.errors)).toEqual([field]);
    }
    const after = await stack.call('GET', SETTINGS);
    expect(after.headers.get('x-settings-version')).toBe(before.headers.get('x-settings-version'));
    expect(after.body).toEqual(before.body);
  });

  it('Generate Schema builds the catalog for admins only, and an admin can then edit it', async () => {
    expect((await stack.call('POST', `${SETTINGS}generate_ui_schema/`, { token: ownerToken })).status).toBe(
      403,
    );
    const generated = await stack.call('POST', `${SETTINGS}generate_ui_schema/`);
    expect(generated.status).toBe(200);
    expect(generated.body.ai_integration.generative_ui_catalog_schema).toEqual(buildGenUiCatalogSchema());

    const edited = { ...buildGenUiCatalogSchema(), title: 'Only what our portal renders' };
    const patched = await stack.call('PATCH', SETTINGS, {
      body: { ai_integration: { generative_ui_catalog_schema: edited } },
    });
    expect(patched.status).toBe(200);
    const read = await stack.call('GET', SETTINGS, { token: consumerToken });
    expect(read.body.ai_integration.generative_ui_catalog_schema.title).toBe('Only what our portal renders');
  });

  it('the audit log shows admins who changed which fields, never secret values', async () => {
    expect((await stack.call('GET', `${SETTINGS}audit/`, { token: ownerToken })).status).toBe(403);
    const before = await current();
    const patched = await stack.call('PATCH', SETTINGS, {
      body: {
        currency: { currency: before.other },
        smtp: {
          EMAIL_HOST_PASSWORD: seededSecret('an audited EMAIL_HOST_PASSWORD', { prefix: 'audit-PLAINTEXT-' }),
        },
        oauth: { CLIENT_SECRET: seededSecret('an audited CLIENT_SECRET', { prefix: 'audit-PLAINTEXT-' }) },
      },
    });
    expect(patched.status).toBe(200);
    const { status, body } = await stack.call('GET', `${SETTINGS}audit/?limit=500`);
    expect(status).toBe(200);
    expect(body.count).toBe(before.version + 1);
    const [latest] = body.results;
    expect(latest).toMatchObject({ version: before.version + 1, action: 'update' });
    expect(latest.actor).toMatchObject({ username: 'admin', role: 'admin' });
    expect(latest.changes).toEqual(
      expect.arrayContaining([
        { field: 'currency.currency', old: before.currency, new: before.other },
        { field: 'smtp.EMAIL_HOST_PASSWORD', secret: true },
        { field: 'oauth.CLIENT_SECRET', secret: true },
      ]),
    );
    expect(JSON.stringify(body)).not.toContain('PLAINTEXT');
  });

  it('a service holding a settings cache applies a change made through the gateway without restart', async () => {
    const settings = settingsService();
    const { BROKER_NAMESPACE: namespace, AMQP_URL: amqpUrl } = settings.config;
    const subscriber = await startSubscriber(settings.url, namespace, amqpUrl, uniqueName('e2e_subscriber'));
    const { cache } = subscriber;
    try {
      const before = await current();
      expect(cache.get().currency.currency).toBe(before.currency);
      const patched = await stack.call('PATCH', SETTINGS, {
        body: { external_api: { webhook_response_retention: 3 }, currency: { currency: before.other } },
      });
      expect(patched.status).toBe(200);
      await waitFor(() => cache.get().currency.currency === before.other, {
        what: 'the cache to see the change',
      });
      expect(cache.get().external_api.webhook_response_retention).toBe(3);
      expect(cache.version()).toBe(Number(patched.headers.get('x-settings-version')));
    } finally {
      await subscriber.stop();
    }
  });
});
