/**
 * Graceful shutdown under load (the runtime's, shown on services run as their own processes):
 * on SIGTERM a service stops taking requests and messages, answers every request already in
 * flight, finishes the handlers running, keeps every event it accepted, and exits 0; the next
 * start relays or consumes what was left. Nothing is lost, nothing is handled twice.
 */
import amqp from 'amqplib';
import { Agent } from 'undici';
import { events } from '@pack/contracts';
import type { Principal } from '@pack/contracts';
import {
  FakeSettings,
  call,
  deleteQueues,
  dropDatabase,
  EventTap,
  freePort,
  spawnService,
  testEnv,
  waitFor,
} from '@pack/testkit';
import { publishAll } from './shutdown';

/** The settings every service reads before it acts: a fake answering the defaults. */
const settings = new FakeSettings();
beforeAll(async () => {
  await settings.start();
});
afterAll(async () => {
  await settings.stop();
});

const admin: Principal = { id: 1, username: 'ops-admin', role: 'admin' };
const PATH = '/v1/core/general_settings/';
const WORKERS = 8;

interface Outcome {
  status?: number;
  version?: number;
  error?: string;
}

describe('SIGTERM while requests and events flow through a service', () => {
  let env: Record<string, string>;
  let tap: EventTap;

  beforeAll(async () => {
    env = testEnv('settings', {
      PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      // A request a worker sent as the signal came, on a connection idle just then, is answered
      // rather than dropped. The longest grace allowed, a ceiling rather than a margin: the
      // workers' client closes its connections once their load is done, which ends the grace.
      SHUTDOWN_IDLE_GRACE_MS: '10000',
    });
    tap = await EventTap.start(process.env.AMQP_URL!, env.BROKER_NAMESPACE!, [events.settingsChanged.type]);
  });
  afterAll(async () => {
    await tap?.stop();
    await dropDatabase(env.MONGO_URL!, env.MONGO_DB!);
  });

  const url = () => `http://127.0.0.1:${env.PORT}`;
  const start = () => spawnService('settings', env);

  it('fails no request that was in flight, loses no accepted change event, and exits 0', async () => {
    const first = await start();
    const connections = new Agent();
    const outcomes: Outcome[] = [];
    let stopping = false;
    const worker = async (id: number) => {
      for (let i = 0; !stopping; i += 1) {
        const outcome: Outcome = {};
        outcomes.push(outcome);
        try {
          const reply = await call(url(), 'PATCH', PATH, {
            principal: admin,
            body: { global_banner: { message: `worker ${id} change ${i}` } },
            dispatcher: connections,
          });
          outcome.status = reply.status;
          outcome.version = Number(reply.headers.get('x-settings-version'));
        } catch (error) {
          // fetch's own message is "fetch failed"; what failed is its cause ("other side closed").
          outcome.error = `${(error as Error).message}: ${String((error as Error).cause)}`;
        }
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, id) => worker(id)));
    await waitFor(() => outcomes.filter((o) => o.status === 200).length >= 40, {
      what: 'load to run',
    });
    // No request starts after the signal; every one started before it is in flight or done.
    stopping = true;
    first.kill();
    await load;
    await connections.close();
    const exit = await first.exited;

    expect({ status: exit.status, signal: exit.signal }).toEqual({ status: 0, signal: null });
    expect(exit.stdout).toContain('shutting down');
    expect(outcomes.filter((o) => o.status !== 200)).toEqual([]);
    const accepted = outcomes.map((o) => o.version!);
    expect(new Set(accepted).size).toBe(accepted.length);

    // Whatever the relay had not published yet is still in the outbox: the next start sends it.
    const second = await start();
    try {
      const published = await tap.waitFor(
        (received) => accepted.every((v) => received.some((e) => e.data.version === v)),
        'an event for every accepted change',
      );
      const versions = published.map((e) => e.data.version as number);
      expect(versions.filter((v, i) => versions.indexOf(v) !== i)).toEqual([]); // none twice
    } finally {
      second.kill();
      expect((await second.exited).status).toBe(0);
    }
  });
});

describe('SIGTERM while messages flow into a consumer', () => {
  const TOTAL = 300;
  const HANDLED = 'validator decision for an unknown change instance ignored';
  let env: Record<string, string>;
  let queue: string;
  let connection: amqp.ChannelModel;
  let channel: amqp.ConfirmChannel;

  beforeAll(async () => {
    env = testEnv('catalog', {
      PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      SETTINGS_URL: settings.url,
    });
    queue = `${env.BROKER_NAMESPACE}.catalog.validation-decisions`;
    connection = await amqp.connect(process.env.AMQP_URL!);
    channel = await connection.createConfirmChannel();
  });
  afterAll(async () => {
    await connection?.close();
    const view = `${env.BROKER_NAMESPACE}.catalog.change-instance-view`;
    await deleteQueues(process.env.AMQP_URL!, [
      queue,
      `${queue}.retries`,
      `${queue}.dlq`,
      view,
      `${view}.retries`,
      `${view}.dlq`,
    ]);
    await dropDatabase(env.MONGO_URL!, env.MONGO_DB!);
  });

  /** The change instance ids whose decision the catalog's handler ran for, once per run. */
  const handledIds = (output: string) =>
    output
      .split('\n')
      .filter((line) => line.includes(HANDLED))
      .map((line) => (JSON.parse(line) as { change_instance_id: number }).change_instance_id);

  const start = () => spawnService('catalog', env);

  const publish = (from: number, to: number) =>
    publishAll(
      channel,
      env.BROKER_NAMESPACE!,
      events.changeInstanceValidationDecided,
      Array.from({ length: to - from }, (_, i) => ({
        data: { change_instance_id: from + i, decision: 'approve' as const, reasons: [] },
        correlationId: `shutdown-${from + i}`,
      })),
    );

  it('finishes the handlers running, leaves the rest queued, and handles every message exactly once', async () => {
    const first = await start();
    const publishing = (async () => {
      for (let from = 1; from <= TOTAL; from += 20) await publish(from, Math.min(from + 20, TOTAL + 1));
    })();
    await waitFor(() => handledIds(first.output()).length >= 30, {
      what: 'messages to flow',
    });
    first.kill('SIGTERM');
    const exit = await first.exited;
    await publishing;
    expect({ status: exit.status, signal: exit.signal }).toEqual({ status: 0, signal: null });
    const beforeStop = handledIds(exit.stdout);
    expect(beforeStop.length).toBeLessThan(TOTAL); // it stopped mid-stream

    const second = await start();
    try {
      await waitFor(() => beforeStop.length + handledIds(second.output()).length >= TOTAL, {
        what: 'every message to be handled',
      });
      await waitFor(async () => (await channel.checkQueue(queue)).messageCount === 0, {
        what: 'an empty queue',
      });
    } finally {
      second.kill('SIGTERM');
    }
    const afterRestart = handledIds((await second.exited).stdout);
    const all = [...beforeStop, ...afterRestart].sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: TOTAL }, (_, i) => i + 1)); // each once, none lost
    expect((await channel.checkQueue(`${queue}.dlq`)).messageCount).toBe(0);
  });
});
