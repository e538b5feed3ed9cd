import { CEILINGS, Receiver, spawnService, waitFor } from '@pack/testkit';
import { startStack, type Stack } from '../stack';

const HOOKS = '/v1/external/serviceowner/webhooks/';
const FIRES = 1000;
/** Set-up and each test: the long ceiling (they drive volume and restarts). */
const BOUND_MS = CEILINGS.longTest;

/**
 * "kill -9 of the dispatcher during a recovery of 1,000 responses ends with
 * each of them resent exactly once". The stack's dispatcher answers HTTP and runs no recovery
 * (WEBHOOK_RECOVERY_CONCURRENCY=0); a replica in its own process runs it and is SIGKILLed midway;
 * another replica started after takes it over once its 2 s lease expired.
 */
describe('a dispatcher killed with -9 during a recovery', () => {
  let stack: Stack;
  let receiver: Receiver;
  const shared = {
    WEBHOOK_MAX_ATTEMPTS: '1',
    WEBHOOK_LEASE_MS: '2000',
    WEBHOOK_RECOVERY_LEASE_MS: '2000',
    WEBHOOK_RECOVERY_BATCH: '20',
    WEBHOOK_RECOVERY_POLL_MS: '100',
    WEBHOOK_BREAKER_VOLUME: '100000',
  };

  beforeAll(async () => {
    receiver = await new Receiver({ delayMs: 20 }).start();
    stack = await startStack({
      env: { 'webhook-dispatcher': { ...shared, WEBHOOK_RECOVERY_CONCURRENCY: '0' } },
    });
    const settings = await stack.call('PATCH', '/v1/core/general_settings/', {
      body: {
        external_api: {
          webhook_rate_limit_per_minute: 100_000,
          webhook_response_rate_limit: 100_000,
          webhook_response_retention: 5000,
        },
      },
    });
    expect(settings.status).toBe(200);
  }, BOUND_MS);
  afterAll(async () => {
    await stack?.stop();
    await receiver?.stop();
  });

  const dispatcherDb = () => stack.service('webhook-dispatcher').context.mongo.connection;
  const responses = () =>
    dispatcherDb().collection<{ _id: string } & Record<string, unknown>>('webhook_responses');

  /**
   * The fires the webhook missed while its target was down: the first, fired through the gateway
   * and recorded FAILED by the dispatcher, then FIRES - 1 copies of its record written straight
   * into the dispatcher's database, each its own message id and number, as as many more fires
   * would have left them (firing each through the gateway and the target cost most of this test).
   */
  async function missedFires(webhookId: number): Promise<void> {
    const first = await responses().findOne({ webhook_id: webhookId });
    expect(first).toMatchObject({ state: 'FAILED', seq: 1 });
    await responses().insertMany(
      Array.from({ length: FIRES - 1 }, (_, i) => ({
        ...first!,
        _id: `msg_${webhookId}_missed${i + 2}`,
        seq: i + 2,
      })),
    );
    // The schedule numbers the next fire after them, as it would have.
    await dispatcherDb()
      .collection('webhook_schedules')
      .updateOne({ _id: webhookId as never }, { $set: { seq: FIRES } });
  }

  const replica = () =>
    spawnService(
      'webhook-dispatcher',
      {
        ...stack.envs['webhook-dispatcher']!,
        ...shared,
        WEBHOOK_RECOVERY_CONCURRENCY: '1',
        PORT: '0',
        METRICS_PORT: '0',
        LOG_LEVEL: 'warn',
      },
      { what: 'the dispatcher replica ready' },
    );

  it(
    'recovers 1,000 FAILED fires: each resent exactly once, the recovery taken over from its cursor',
    async () => {
      const service = await stack.call('POST', '/v1/catalog/services/', { body: { name: 'Crash recovery' } });
      const hook = await waitFor(async () => {
        const reply = await stack.call('POST', HOOKS, {
          body: { name: 'Down all weekend', service: service.body.id, target_url: receiver.url },
        });
        return reply.status === 201 ? reply.body : undefined;
      });
      const since = new Date(Date.now() - 1000).toISOString();
      receiver.fallback = { status: 503, body: 'down' };
      const failed = async () =>
        (await stack.call('GET', `${HOOKS}${hook.id}/responses/?state=FAILED&limit=1`)).body.count as number;
      const fired = await stack.call('POST', `${HOOKS}${hook.id}/trigger/`, { body: {} });
      expect(fired.status).toBe(202);
      await waitFor(async () => (await failed()) === 1 || undefined, { what: 'the first fire FAILED' });
      await missedFires(hook.id as number);
      expect(await failed()).toBe(FIRES);
      const originals = new Set(
        (
          await responses()
            .find({ webhook_id: hook.id }, { projection: { _id: 1 } })
            .toArray()
        ).map((r) => String(r._id)),
      );
      expect(originals.size).toBe(FIRES);
      expect([...originals]).toContain(String(receiver.requests[0]!.headers['webhook-id']));
      receiver.fallback = { status: 200, body: 'ok' };
      const before = receiver.requests.length;

      const first = await replica();
      const started = await stack.call('POST', `${HOOKS}${hook.id}/recover/`, { body: { since } });
      expect(started.status).toBe(202);
      expect(started.body.total).toBe(FIRES);
      const progress = async () =>
        (await stack.call('GET', `${HOOKS}${hook.id}/recoveries/${started.body.id}/`)).body as {
          state: string;
          resent: number;
        };
      await waitFor(async () => ((await progress()).resent >= 100 ? true : undefined), {
        what: 'the recovery under way',
        intervalMs: 20,
      });
      first.kill('SIGKILL');
      expect((await first.exited).signal).toBe('SIGKILL');
      const atKill = await progress();
      expect(atKill.state).toBe('RUNNING');
      expect(atKill.resent).toBeLessThan(FIRES);

      const second = await replica();
      try {
        const done = await waitFor(
          async () => {
            const now = await progress();
            return now.state === 'DONE' ? now : undefined;
          },
          { what: 'the recovery DONE', timeoutMs: CEILINGS.longWait, intervalMs: 250 },
        );
        expect(done.resent).toBe(FIRES);
        await waitFor(
          async () => {
            const reply = await stack.call(
              'GET',
              `${HOOKS}${hook.id}/responses/?resend=true&state=OK&limit=1`,
            );
            return reply.body.count === FIRES || undefined;
          },
          { what: `${FIRES} resends OK`, timeoutMs: CEILINGS.longWait, intervalMs: 500 },
        );
        const resends = await dispatcherDb()
          .collection('webhook_responses')
          .find({ webhook_id: hook.id, resend_of: { $ne: null } }, { projection: { resend_of: 1, state: 1 } })
          .toArray();
        const perOriginal = new Map<number, number>();
        for (const r of resends)
          perOriginal.set(r.resend_of.seq, (perOriginal.get(r.resend_of.seq) ?? 0) + 1);
        expect(resends).toHaveLength(FIRES);
        expect(perOriginal.size).toBe(FIRES);
        expect([...perOriginal.values()].every((count) => count === 1)).toBe(true);
        // At the receiver: every missed message arrived again under its own webhook-id; a resend
        // whose answer was lost with the killed replica may arrive twice (a retry, same id).
        const again = new Map<string, number>();
        for (const r of receiver.requests.slice(before)) {
          const id = String(r.headers['webhook-id']);
          again.set(id, (again.get(id) ?? 0) + 1);
        }
        expect(new Set(again.keys())).toEqual(originals);
        const twice = [...again.values()].filter((count) => count > 1).length;
        process.stdout.write(
          `recovery killed at ${atKill.resent}/${FIRES} resent; ${FIRES} resends, one per fire; ` +
            `${twice} delivered twice after the kill (same webhook-id)\n`,
        );
      } finally {
        second.kill('SIGTERM');
        await second.exited;
      }
    },
    BOUND_MS,
  );
});
