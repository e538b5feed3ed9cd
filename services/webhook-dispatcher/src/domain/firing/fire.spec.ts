import type { FirePlan } from './firing-rules';
import { emptySchedule } from './firing-rules';
import { Firing } from './fire';
import type { ResponseRecord, ScheduleRecord, Trigger, WebhookRecord } from '../model';
import type { ResponseStore } from '../responses/store';
import type { ScheduleStore } from './store';

const webhook = {
  _id: 1,
  service_id: 7,
  version: 1,
  trigger_wait_time: 0,
  trigger_cooling_time: 0,
} as WebhookRecord;
const trigger = (key: string): Trigger => ({
  key,
  mode: 'submission',
  body: { id: 7, name: 's', owner: { id: 1, name: 'o' }, state: 'PENDING' },
  change_instance_id: 1,
  event_at: new Date(),
});
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Each schedule update and each insert waits until the test lets it finish. */
function stores() {
  let schedule: ScheduleRecord = emptySchedule(1);
  const log: string[] = [];
  const inserts: { ids: string[]; finish: (error?: Error) => void }[] = [];
  const numbering: (() => void)[] = [];
  const schedules = {
    read: async () => schedule,
    tryFire: (_id: number, plan: FirePlan) =>
      new Promise<ScheduleRecord>((resolve) =>
        numbering.push(() => {
          schedule = { ...schedule, seq: schedule.seq + plan.count, rate_slot: plan.next.rate_slot };
          log.push(`numbered ${schedule.seq - plan.count + 1}..${schedule.seq}`);
          resolve(schedule);
        }),
      ),
    countSuppressed: async () => undefined,
  } as ScheduleStore;
  const insertMany = (records: ResponseRecord[]) =>
    new Promise<boolean[]>((resolve, reject) => {
      const ids = records.map((record) => record._id);
      log.push(`inserting ${records.map((record) => record.seq).join(',')}`);
      inserts.push({
        ids,
        finish: (error) => (error ? reject(error) : resolve(ids.map(() => true))),
      });
    });
  const responses = {
    insertMany,
    insert: async (record: ResponseRecord) => (await insertMany([record]))[0]!,
  } as unknown as ResponseStore;
  /** Lets the schedule update under way finish. */
  const number = async () => {
    numbering.shift()!();
    await tick();
  };
  return { schedules, responses, log, inserts, number, numbering };
}

function firing(store: ReturnType<typeof stores>) {
  const delivered: string[] = [];
  const fire = new Firing(
    store.schedules,
    store.responses,
    {
      rateWindowMs: 60_000,
      rateLimit: () => 100_000,
      leaseFor: () => ({ token: 't', until: new Date(Date.now() + 30_000) }),
      unlease: () => undefined,
      deliverNow: (record) => delivered.push(record._id),
      dueLater: () => undefined,
    },
    { fired: () => undefined, merged: () => undefined, suppressed: () => undefined },
  );
  return { fire, delivered };
}

describe('Firing: group commit of unshaped triggers', () => {
  it("numbers the next batch while the previous batch's insert runs, and answers each trigger after its own insert", async () => {
    const store = stores();
    const { fire, delivered } = firing(store);
    const answered: string[] = [];
    const answer = (key: string) =>
      fire.trigger(webhook, trigger(key)).then((r) => answered.push(`${key}:${r.response_id}`));
    const first = answer('a');
    await tick();
    // 'b' and 'c' arrive while 'a' is being numbered: they form the next batch.
    const next = [answer('b'), answer('c')];
    await store.number();
    expect(store.log).toEqual(['numbered 1..1', 'inserting 1']);
    // 'a' is being inserted, and 'b' and 'c' are numbered meanwhile.
    await store.number();
    expect(store.log).toEqual(['numbered 1..1', 'inserting 1', 'numbered 2..3', 'inserting 2,3']);
    expect(answered).toEqual([]); // nothing is answered before its fire is written

    store.inserts[1]!.finish();
    await Promise.all(next);
    expect(answered).toEqual(['b:2', 'c:3']);
    store.inserts[0]!.finish();
    await first;
    expect(answered).toEqual(['b:2', 'c:3', 'a:1']);
    expect(delivered).toHaveLength(3);
  });

  it('fails only the triggers whose insert failed (their numbers become gaps); a batch waits while four inserts of the webhook run', async () => {
    const store = stores();
    const { fire } = firing(store);
    const outcomes: string[] = [];
    const settle = (key: string) =>
      fire.trigger(webhook, trigger(key)).then(
        (r) => outcomes.push(`${key}:${r.response_id}`),
        (error: Error) => outcomes.push(`${key}:${error.message}`),
      );
    const pending: Promise<unknown>[] = [];
    for (const key of ['a', 'b', 'c', 'd', 'e']) {
      pending.push(settle(key));
      await tick();
      if (store.numbering.length > 0) await store.number();
    }
    // Four inserts in flight (a, b, c, d): 'e' is not numbered until one of them ends.
    expect(store.inserts).toHaveLength(4);
    expect(store.numbering).toHaveLength(0);
    store.inserts[0]!.finish(new Error('insert failed'));
    await tick();
    await store.number();
    expect(store.log.at(-2)).toBe('numbered 5..5');
    for (const insert of store.inserts.slice(1)) insert.finish();
    await Promise.all(pending);
    expect(outcomes.sort()).toEqual(['a:insert failed', 'b:2', 'c:3', 'd:4', 'e:5']);
  });
});
