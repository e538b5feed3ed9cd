/**
 * Recovery: RECOVER FAILED responses of the webhook are written to its database (numbered after
 * its schedule, as fires the target never took), then one `POST .../recover/` resends them all.
 */
import mongoose from 'mongoose';
import { principalHeaders } from '@pack/http-kit';
import type { FakeSettings } from '@pack/testkit';
import { rssMb } from '../llm-gateway/measure';
import { ADMIN, OWNER, SERVICE_ID, type BenchDispatcher } from './dispatcher';
import type { Receiver } from './load';

export interface RecoveryFigures {
  perSecond: number;
  queuedMs: number;
  deliveredMs: number;
  rssBefore: number;
  rssPeak: number;
}

/** FAILED responses as fires the target never took, numbered after the schedule. */
function failedResponses(webhookId: number, first: number, from: number, count: number) {
  const body = { id: SERVICE_ID, name: 'Bench', owner: OWNER, state: 'PENDING' };
  return Array.from({ length: count }, (_, i) => {
    const at = new Date();
    return {
      _id: `msg_${webhookId}_failed${from + i}`,
      webhook_id: webhookId,
      seq: first + from + i,
      webhook_version: 1,
      state: 'FAILED',
      mode: 'submission',
      change_instance_id: 1,
      body,
      event_at: at,
      due_at: at,
      lease_until: null,
      lease_token: null,
      attempt_count: 1,
      attempts: [{ at, status_code: 503, error: null, duration_ms: 1 }],
      status_code: 503,
      response_body: 'down',
      response_truncated: false,
      error: null,
      resend_of: null,
      created_at: at,
      updated_at: at,
    };
  });
}

/** Resends delivered per second from the recover call to the last one at the receiver, and the RSS peak. */
export async function benchRecovery(
  dispatcher: BenchDispatcher,
  receiver: Receiver,
  settings: FakeSettings,
  count: number,
): Promise<RecoveryFigures> {
  const { url, webhookId, env } = dispatcher;
  const secret = dispatcher.options.secret;
  const client = new mongoose.mongo.MongoClient(dispatcher.options.mongoUrl);
  try {
    const db = client.db(env.MONGO_DB);
    // The retention must keep the originals and their resends; a settings change reaches the
    // dispatcher by event (it refetches the document).
    await settings.change(env.AMQP_URL!, env.BROKER_NAMESPACE!, (document) => {
      document.external_api.webhook_response_retention = 100_000;
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const schedule = await db
      .collection<{ _id: number; seq: number }>('webhook_schedules')
      .findOneAndUpdate({ _id: webhookId }, { $inc: { seq: count } }, { returnDocument: 'after' });
    const first = schedule!.seq - count + 1;
    const since = new Date();
    const ids: string[] = [];
    for (let n = 0; n < count; n += 1000) {
      const batch = failedResponses(webhookId, first, n, Math.min(1000, count - n));
      ids.push(...batch.map((record) => record._id));
      await db.collection('webhook_responses').insertMany(batch as never[]);
    }
    const delivered = Promise.all(ids.map((id) => receiver.expect(id)));
    const rssBefore = rssMb(dispatcher.pid);
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb(dispatcher.pid))), 250);
    const pathname = `/v1/external/serviceowner/webhooks/${webhookId}/recover/`;
    const started = performance.now();
    const answer = await fetch(`${url}${pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...principalHeaders(secret, 'POST', pathname, ADMIN) },
      body: JSON.stringify({ since: new Date(since.getTime() - 1000).toISOString() }),
    });
    const recovery = (await answer.json()) as { id: string; total: number };
    if (answer.status !== 202 || recovery.total !== count)
      throw new Error(`recover answered ${answer.status} ${JSON.stringify(recovery)}`);
    let queuedMs = 0;
    const progress = `/v1/external/serviceowner/webhooks/${webhookId}/recoveries/${recovery.id}/`;
    const watch = (async () => {
      for (;;) {
        const read = await fetch(`${url}${progress}`, {
          headers: principalHeaders(secret, 'GET', progress, ADMIN),
        });
        const now = (await read.json()) as { state: string; resent: number };
        if (process.env.BENCH_DETAIL)
          console.log(`recovery ${now.state} ${now.resent}, ${receiver.waiting.size} not delivered`);
        if (now.state !== 'RUNNING') break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      queuedMs = performance.now() - started;
    })();
    await Promise.all([delivered, watch]);
    const deliveredMs = performance.now() - started;
    clearInterval(sampler);
    return { perSecond: count / (deliveredMs / 1000), queuedMs, deliveredMs, rssBefore, rssPeak };
  } finally {
    await client.close();
  }
}
