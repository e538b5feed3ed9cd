/**
 * Graceful shutdown under load (the runtime's, shown on the settings service run as its own
 * process): on SIGTERM it stops taking requests, answers every request already in flight,
 * relays or keeps every event it accepted, and exits 0; the next start relays what was left.
 */
import { events } from '@pack/contracts';
import type { Principal } from '@pack/contracts';
import {
  call,
  dropDatabase,
  EventTap,
  freePort,
  startEntryPoint,
  testEnv,
  waitFor,
  type EntryPointResult,
} from '@pack/testkit';

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
    });
    tap = await EventTap.start(process.env.AMQP_URL!, env.BROKER_NAMESPACE!, [events.settingsChanged.type]);
  });
  afterAll(async () => {
    await tap?.stop();
    await dropDatabase(env.MONGO_URL!, env.MONGO_DB!);
  });

  const url = () => `http://127.0.0.1:${env.PORT}`;
  async function start(): Promise<{ kill: () => void; exited: Promise<EntryPointResult> }> {
    const { child, exited } = startEntryPoint('services/settings/src/main.ts', [], env);
    await waitFor(async () => (await fetch(`${url()}/readyz`)).status === 200, {
      timeoutMs: 30_000,
      what: 'settings to be ready',
    });
    return { kill: () => child.kill('SIGTERM'), exited };
  }

  it('fails no request that was in flight, loses no accepted change event, and exits 0', async () => {
    const first = await start();
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
          });
          outcome.status = reply.status;
          outcome.version = Number(reply.headers.get('x-settings-version'));
        } catch (error) {
          outcome.error = (error as Error).message;
        }
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, (_, id) => worker(id)));
    await waitFor(() => outcomes.filter((o) => o.status === 200).length >= 40, {
      timeoutMs: 30_000,
      what: 'load to run',
    });
    // No request starts after the signal; every one started before it is in flight or done.
    stopping = true;
    first.kill();
    await load;
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
  }, 120_000);
});
