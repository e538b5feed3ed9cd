import type { GeneralSettings } from '@pack/contracts';
import { fakeDate, startOfNextMinute, waitFor } from '@pack/testkit';
import {
  FakeCatalog,
  owner,
  Receiver,
  startDispatcher,
  WEBHOOKS,
  webhookOnNewService,
  type DispatcherHarness,
} from './harness';

const RATE_WINDOW_MS = 1500;

/** Two dispatcher instances on one database and broker namespace: every rule must hold across both. */
describe('wait windows, cooling, rate limits and retention across two instances', () => {
  let a: DispatcherHarness;
  let b: DispatcherHarness;
  let catalog: FakeCatalog;
  let receiver: Receiver;
  /** The settings every test starts from (and must leave as it found them). */
  let baseline: GeneralSettings;

  beforeAll(async () => {
    catalog = await new FakeCatalog().start();
    const env = { CATALOG_URL: catalog.url, WEBHOOK_RATE_WINDOW_MS: String(RATE_WINDOW_MS) };
    a = await startDispatcher({ env });
    b = await a.replica();
    await a.changeSettings((s) => {
      s.external_api.webhook_rate_limit_per_minute = 1000;
    });
    await waitFor(async () =>
      (await fetch(`${b.service.url}/metrics`)).text().then((t) => t.includes('settings_version')),
    );
    baseline = structuredClone(a.settings.document);
  });
  afterAll(async () => {
    await b.stop();
    await a.stop();
    await catalog.stop();
  });
  beforeEach(async () => {
    receiver = await new Receiver().start();
  });
  afterEach(async () => {
    await receiver.stop();
    expect(a.settings.document).toEqual(baseline);
  });

  /** Runs `body` with the settings changed on both instances, then puts back what was there before. */
  const withSettings = async (change: (settings: GeneralSettings) => void, body: () => Promise<void>) => {
    const before = structuredClone(a.settings.document);
    await a.changeSettings(change);
    await b.changeSettings(() => undefined);
    try {
      await body();
    } finally {
      await a.changeSettings((settings) => Object.assign(settings, structuredClone(before)));
      await b.changeSettings(() => undefined);
    }
  };

  const webhookOn = async (change: Record<string, unknown>) => {
    const { service, webhook } = await webhookOnNewService(a, receiver.url, { authorization: '', ...change });
    return { service, id: webhook.id };
  };
  const trigger = (via: DispatcherHarness, id: number, body: Record<string, unknown> = {}) =>
    via.as(owner, 'POST', `${WEBHOOKS}${id}/trigger/`, body);
  const stored = (via: DispatcherHarness, id: number) =>
    via.collection('webhook_responses').find({ webhook_id: id }).sort({ seq: -1 }).toArray();
  const allSettled = (id: number, count: number) =>
    waitFor(
      async () => {
        const records = await stored(a, id);
        return records.length >= count && records.every((r) => r.state === 'OK' || r.state === 'FAILED')
          ? records
          : undefined;
      },
      { what: `${count} settled fires of webhook ${id}` },
    );

  it('merges triggers inside the wait window into one request with the latest state', async () => {
    const { service, id } = await webhookOn({ trigger_wait_time: 1.5 });
    catalog.instances.set(91, { service_id: service, state: 'PENDING' });
    catalog.instances.set(92, { service_id: service, state: 'IN_PROGRESS' });
    catalog.instances.set(93, { service_id: service, state: 'COMPLETED' });
    const first = await trigger(a, id, { change_instance_id: 91 });
    const second = await trigger(b, id, { change_instance_id: 92 });
    const third = await trigger(a, id, { change_instance_id: 93 });
    expect([first.body.outcome, second.body.outcome, third.body.outcome]).toEqual([
      'scheduled',
      'merged',
      'merged',
    ]);
    expect(new Set([first.body.response_id, second.body.response_id, third.body.response_id]).size).toBe(1);
    const records = await allSettled(id, 1);
    expect(records).toHaveLength(1);
    expect(receiver.requests.map((r) => r.json.state)).toEqual(['COMPLETED']);
    expect(records[0]!.change_instance_id).toBe(93);
  });

  it('suppresses triggers within the cooling time after a fire, on either instance, and counts them', async () => {
    const { id } = await webhookOn({ trigger_cooling_time: 60 });
    const outcomes = [];
    for (const via of [a, b, a, b]) outcomes.push((await trigger(via, id)).body.outcome);
    expect(outcomes).toEqual(['scheduled', 'suppressed', 'suppressed', 'suppressed']);
    await allSettled(id, 1);
    expect(receiver.requests).toHaveLength(1);
    expect((await a.collection('webhook_schedules').findOne({ _id: id as never }))?.suppressed).toBe(3);
  });

  it('delays fires beyond the rate limit to later windows, never drops them', async () => {
    await withSettings(
      (settings) => {
        settings.external_api.webhook_rate_limit_per_minute = 2;
      },
      async () => {
        const { id } = await webhookOn({});
        const replies = await Promise.all([a, b, a, b, a].map((via) => trigger(via, id)));
        expect(replies.map((r) => r.body.outcome)).toEqual(Array(5).fill('scheduled'));
        const records = await allSettled(id, 5);
        expect(records.every((r) => r.state === 'OK')).toBe(true);
        expect(receiver.requests).toHaveLength(5);
        const perWindow = new Map<number, number>();
        for (const r of records) {
          const slot = Math.floor((r.due_at as Date).getTime() / RATE_WINDOW_MS);
          perWindow.set(slot, (perWindow.get(slot) ?? 0) + 1);
        }
        expect(Math.max(...perWindow.values())).toBeLessThanOrEqual(2);
        expect(perWindow.size).toBeGreaterThanOrEqual(3);
        for (const r of records) expect(r.attempts).toHaveLength(1);
      },
    );
  });

  it('keeps exactly the N newest responses under concurrent fires from both instances', async () => {
    await withSettings(
      (settings) => {
        settings.external_api.webhook_response_retention = 10;
      },
      async () => {
        const { id } = await webhookOn({});
        const replies = await Promise.all(Array.from({ length: 25 }, (_, n) => trigger(n % 2 ? a : b, id)));
        const numbers = replies.map((r) => r.body.response_id as number).sort((x, y) => y - x);
        await receiver.received(25);
        const kept = await waitFor(
          async () => {
            const records = await stored(a, id);
            return records.length === 10 && records.every((r) => r.state === 'OK') ? records : undefined;
          },
          { what: 'retention trimmed to 10' },
        );
        expect(kept.map((r) => r.seq)).toEqual(numbers.slice(0, 10));
        const listed = await b.as(owner, 'GET', `${WEBHOOKS}${id}/responses/`);
        expect(listed.body.count).toBe(10);
      },
    );
  });

  it('answers 429 with Retry-After beyond webhook_response_rate_limit, counted across instances', async () => {
    const { id } = await webhookOn({});
    await withSettings(
      (settings) => {
        settings.external_api.webhook_response_rate_limit = 3;
      },
      async () => {
        // A caller of its own: the count is per caller and wall-clock minute. The clock (Date only,
        // running at real speed; timers stay real) starts 1 s into a minute, so the four reads
        // fall in one minute whenever the test runs.
        fakeDate(startOfNextMinute() + 1_000);
        try {
          const reader = { id: 77, username: 'auditor', role: 'admin' as const };
          const path = `${WEBHOOKS}${id}/responses/`;
          const statuses = [];
          for (const via of [a, b, a]) statuses.push((await via.as(reader, 'GET', path)).status);
          const limited = await b.as(reader, 'GET', path);
          expect(statuses).toEqual([200, 200, 200]);
          expect(limited.status).toBe(429);
          // Until the end of that minute: 59 s less the time the reads took (well under 29 s).
          expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(30);
          expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(59);
        } finally {
          jest.useRealTimers();
        }
      },
    );
  });
});
