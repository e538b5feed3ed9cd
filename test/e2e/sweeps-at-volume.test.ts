import type { Connection } from 'mongoose';
import { CEILINGS, Receiver, waitFor } from '@pack/testkit';
import { startStack, type Stack } from '../stack';

// Tests that drive volume: the long ceiling for every test of the file.
jest.setTimeout(CEILINGS.longTest);

const WEBHOOKS = '/v1/external/serviceowner/webhooks/';
/** Trimmed: the issue's figure. */
const KEPT = 100_000;
/** Deleted with their webhook: past FerretDB's 65,535 (inserting costs as much as deleting). */
const DELETED = 70_000;
/** external_api.webhook_response_retention's default. */
const RETENTION = 100;

/**
 * On our FerretDB one deleteMany matching more than 65,535 documents fails
 * ("extended protocol limited to 65535 parameters"); the retention trim and a deleted webhook's
 * responses delete in slices (@pack/db deleteInSlices). The 100,000 responses a busy webhook kept
 * are written straight into the dispatcher's database, as a long life of fires would have left
 * them (the older ones without their payload: keptResponses); the rest goes through the gateway.
 */
describe('"every sweep and trim works at any size", through the gateway', () => {
  let stack: Stack;
  let receiver: Receiver;
  let owner: string;
  let consumer: string;
  let dispatcherDb: Connection;

  beforeAll(async () => {
    receiver = await new Receiver().start();
    stack = await startStack({
      env: {
        'webhook-dispatcher': { WEBHOOK_RETENTION_SWEEP_MS: '200' },
        // Deleting 70,000 responses on our FerretDB may take longer than the default 30 s (see
        // docs/decisions/0044): the test waits for the answer rather than the gateway's 504.
        gateway: { UPSTREAM_TIMEOUT_MS: '300000' },
      },
    });
    owner = await stack.issueToken('service_owner');
    consumer = await stack.issueToken('consumer');
    dispatcherDb = stack.service('webhook-dispatcher').context.mongo.connection;
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver?.stop();
  });

  const responses = () =>
    dispatcherDb.collection<{ _id: string } & Record<string, unknown>>('webhook_responses');

  async function serviceWithWebhook(name: string): Promise<{ service: number; webhook: number }> {
    const service = await stack.call('POST', '/v1/catalog/services/', { token: owner, body: { name } });
    expect(service.status).toBe(201);
    const webhook = await waitFor(async () => {
      const reply = await stack.call('POST', WEBHOOKS, {
        token: owner,
        body: { name: `${name} hook`, service: service.body.id, target_url: receiver.url },
      });
      return reply.status === 201 ? reply.body : undefined;
    });
    return { service: service.body.id as number, webhook: webhook.id as number };
  }

  /**
   * `count` finished responses numbered from 1, in insertMany batches; answers the ms it took.
   * The newest RETENTION, which a trim keeps and a list shows, are whole records as a fire leaves
   * them. The older ones, which only a trim or a delete ever touches, hold the fields the
   * dispatcher's indexes and its trim, delete and polls read (webhook, seq, state, due, lease,
   * created) and not the fire's payload (body, attempts, answer): FerretDB decodes every field of
   * every document it inserts or scans, so the payload would only triple the time of the test
   * while the trim and the delete take the same slices, commands and documents.
   */
  async function keptResponses(webhookId: number, count: number): Promise<number> {
    const started = Date.now();
    const at = new Date(Date.now() - 86_400_000);
    const response = (seq: number) => {
      const indexed = {
        _id: `old-${webhookId}-${seq}`,
        webhook_id: webhookId,
        seq,
        state: 'OK',
        due_at: at,
        lease_until: null,
        created_at: at,
      };
      return seq <= count - RETENTION
        ? indexed
        : {
            ...indexed,
            webhook_version: 1,
            mode: 'submission',
            change_instance_id: null,
            body: { id: 1, name: 'then', owner: { id: 1, name: 'someone' }, state: 'PENDING' },
            event_at: at,
            lease_token: null,
            attempt_count: 1,
            attempts: [{ at, status_code: 200, error: null, duration_ms: 5 }],
            status_code: 200,
            response_body: 'ok',
            response_truncated: false,
            error: null,
            updated_at: at,
          };
    };
    for (let from = 1; from <= count; from += 10_000) {
      await responses().insertMany(
        Array.from({ length: Math.min(10_000, count + 1 - from) }, (_, i) => response(from + i)),
        { ordered: false },
      );
    }
    // The schedule numbers the next fire after them, as it would have.
    await dispatcherDb
      .collection('webhook_schedules')
      .updateOne({ _id: webhookId as never }, { $set: { seq: count } });
    return Date.now() - started;
  }

  it('trims 100,000 responses of one webhook to the retention after its next fire', async () => {
    const { service, webhook } = await serviceWithWebhook('Busy for years');
    const inserted = await keptResponses(webhook, KEPT);

    const submitted = await stack.call('POST', `/v1/catalog/services/${service}/declarations/`, {
      token: consumer,
      body: { declaration: { size: 'small' } },
    });
    expect(submitted.status).toBe(201);
    await receiver.received(1);
    const started = Date.now();
    // Polled in the database: reads of responses through the gateway are rate limited.
    await waitFor(async () => (await responses().countDocuments({ webhook_id: webhook })) === RETENTION, {
      timeoutMs: CEILINGS.longWait,
      intervalMs: 250,
      what: `the responses trimmed to ${RETENTION}`,
    });
    const trimmed = Date.now() - started;
    const listed = await stack.call('GET', `${WEBHOOKS}${webhook}/responses/?limit=${RETENTION}`, {
      token: owner,
    });
    expect(listed.status).toBe(200);
    expect(listed.body.count).toBe(RETENTION);
    // The newest stay: the fire just delivered, then the 99 newest of those kept.
    expect(listed.body.results[0]).toMatchObject({ id: KEPT + 1, state: 'OK', mode: 'submission' });
    expect(listed.body.results.map((r: { id: number }) => r.id)).toEqual(
      Array.from({ length: RETENTION }, (_, i) => KEPT + 1 - i),
    );
    process.stdout.write(
      `trim: 100,000 responses inserted in ${inserted} ms, trimmed to ${RETENTION} within ${trimmed} ms\n`,
    );
  });

  it('deletes a webhook with 70,000 responses, and its responses with it', async () => {
    const { webhook } = await serviceWithWebhook('Deleted after years');
    const other = await serviceWithWebhook('Stays');
    await responses().insertOne({
      _id: `other-${other.webhook}`,
      webhook_id: other.webhook,
      seq: 1,
      state: 'OK',
    });
    const inserted = await keptResponses(webhook, DELETED);

    const started = Date.now();
    const deleted = await stack.call('DELETE', `${WEBHOOKS}${webhook}/`, { token: owner });
    const took = Date.now() - started;
    expect(deleted.status).toBe(204);
    expect((await stack.call('GET', `${WEBHOOKS}${webhook}/`, { token: owner })).status).toBe(404);
    expect(await responses().countDocuments({ webhook_id: webhook })).toBe(0);
    expect(await responses().countDocuments({ webhook_id: other.webhook })).toBe(1);
    process.stdout.write(
      `delete: 70,000 responses inserted in ${inserted} ms, the webhook deleted with them in ${took} ms\n`,
    );
  });
});
