import { events } from '@pack/contracts';
import { EventTap, outboxDrained, TcpProxy, uniqueName, waitFor, seededSecret } from '@pack/testkit';
import { SettingsHarness, startSettings, admin } from './harness';
import { startSubscriber } from './subscriber';

describe('live propagation of settings changes', () => {
  let settings: SettingsHarness;
  beforeAll(async () => {
    settings = await startSettings();
  });
  afterAll(async () => {
    await settings.stop();
  });

  it('a subscriber fetches at start and applies each change from settings.changed, without restart', async () => {
    const first = await settings.patch({ currency: { currency: 'GBP' } });
    const subscriber = await startSubscriber(
      settings.url,
      settings.env.BROKER_NAMESPACE!,
      settings.env.AMQP_URL!,
    );
    try {
      expect(subscriber.cache.get().currency.currency).toBe('GBP');
      expect(subscriber.cache.version()).toBe(Number(first.headers.get('x-settings-version')));

      const patched = await settings.patch({
        currency: { currency: 'EUR' },
        external_api: { webhook_response_retention: 12 },
      });
      await waitFor(() => subscriber.cache.get().currency.currency === 'EUR', {
        what: 'the cache to see EUR',
      });
      expect(subscriber.cache.get().external_api.webhook_response_retention).toBe(12);
      expect(subscriber.cache.version()).toBe(Number(patched.headers.get('x-settings-version')));

      // The AI switches are on by default: both off turns the derived flag off.
      expect(subscriber.cache.get().ai_integration.show_ai_integration).toBe(true);
      await settings.patch({ ai_integration: { show_ai_validator: false, show_ai_processor: false } });
      await waitFor(() => !subscriber.cache.get().ai_integration.show_ai_integration, {
        what: 'the derived flag in the cache',
      });
    } finally {
      await subscriber.stop();
    }
  });

  it('every replica of a subscribing service applies the change (no polling)', async () => {
    const service = uniqueName('replicated');
    const namespace = settings.env.BROKER_NAMESPACE!;
    const replicas = [
      await startSubscriber(settings.url, namespace, settings.env.AMQP_URL!, service),
      await startSubscriber(settings.url, namespace, settings.env.AMQP_URL!, service),
    ];
    try {
      const patched = await settings.patch({ global_banner: { message: 'Seen by every replica' } });
      const version = Number(patched.headers.get('x-settings-version'));
      for (const replica of replicas) {
        await waitFor(() => replica.cache.version() === version, { what: 'each replica' });
        expect(replica.cache.get().global_banner.message).toBe('Seen by every replica');
      }
    } finally {
      for (const replica of replicas) await replica.stop();
    }
  });

  it('the event carries the changed groups, the version and who changed it, never a secret value', async () => {
    await outboxDrained(settings.service); // what earlier changes published is not this test's
    const tap = await EventTap.start(settings.env.AMQP_URL!, settings.env.BROKER_NAMESPACE!, [
      events.settingsChanged.type,
    ]);
    try {
      const patched = await settings.patch({
        smtp: { EMAIL_HOST_PASSWORD: seededSecret('EMAIL_HOST_PASSWORD', { prefix: 'event-PLAINTEXT-' }) },
        global_banner: { message: 'Hello' },
      });
      const version = Number(patched.headers.get('x-settings-version'));
      await outboxDrained(settings.service);
      const published = await tap.drain();
      expect(published).toHaveLength(1);
      expect(published[0]).toMatchObject({
        type: 'settings.general_settings.changed.v1',
        source: 'settings',
        data: { groups: ['smtp', 'global_banner'], version, changed_by: admin.id },
      });
      expect(published[0]!.raw).not.toContain('PLAINTEXT');
      expect(published[0]!.raw).not.toContain('Hello');
    } finally {
      await tap.stop();
    }
  });
});

describe('a change while the broker is unreachable', () => {
  it('is stored at once and reaches subscribers when the broker is back (outbox)', async () => {
    const amqpUrl = process.env.AMQP_URL!;
    const proxy = await TcpProxy.forUrl(amqpUrl).start();
    const namespace = uniqueName('t');
    const settings = await startSettings({
      env: {
        AMQP_URL: proxy.rewrite(amqpUrl),
        BROKER_NAMESPACE: namespace,
      },
    });
    await waitFor(() => settings.service.context.broker.isReady(), { what: 'settings broker ready' });
    const subscriber = await startSubscriber(settings.url, namespace, amqpUrl);
    try {
      proxy.cut();
      await waitFor(() => !settings.service.context.broker.isReady(), { what: 'settings broker down' });
      const patched = await settings.patch({ currency: { currency: 'EUR' } });
      expect(patched.status).toBe(200);
      const [stored] = await settings.versionDocuments();
      expect(stored!._outbox_pending).toBe(true);
      expect(stored!._outbox[0]!.data).toEqual({ groups: ['currency'], version: 1, changed_by: admin.id });

      proxy.restore();
      await waitFor(() => subscriber.cache.get().currency.currency === 'EUR', {
        what: 'the cache to see EUR',
      });
      await waitFor(async () => !(await settings.versionDocuments())[0]!._outbox_pending, {
        what: 'the outbox to drain',
      });
    } finally {
      await subscriber.stop();
      await settings.stop();
      await proxy.stop();
    }
  });
});

describe('two instances of the settings service', () => {
  it('share one state: concurrent changes through both survive and each serves the other’s', async () => {
    const first = await startSettings();
    const second = await first.replica();
    try {
      const answers = await Promise.all([
        first.patch({ currency: { currency: 'EUR' } }),
        second.patch({ global_banner: { ENABLED: true, message: 'From the second instance' } }),
        first.patch({ gui_table: { table_refresh_interval: 60 } }),
        second.patch({ external_api: { webhook_rate_limit_per_minute: 5 } }),
      ]);
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
      for (const instance of [first, second]) {
        // Each replica serves reads from memory; the other's changes reach it by event (or within a second).
        const { body } = await waitFor(
          async () => {
            const answer = await instance.get();
            return answer.headers.get('x-settings-version') === '4' ? answer : undefined;
          },
          { what: 'both replicas to serve version 4' },
        );
        expect(body.currency.currency).toBe('EUR');
        expect(body.global_banner).toEqual({ ENABLED: true, message: 'From the second instance' });
        expect(body.gui_table.table_refresh_interval).toBe(60);
        expect(body.external_api.webhook_rate_limit_per_minute).toBe(5);
      }
    } finally {
      await second.stop();
      await first.stop();
    }
  });
});
