import type { FirePlan } from '../firing/firing-rules';
import { emptySchedule } from '../firing/firing-rules';
import type { ResponseRecord, ScheduleRecord, Trigger, WebhookRecord } from '../model';
import type { ResponseStore } from '../responses/store';
import type { ScheduleStore } from '../firing/store';
import { ResendFiring } from './resend-firing';

const WINDOW = 1000;
const webhook = { _id: 1, service_id: 7, version: 1 } as WebhookRecord;
const resend = (key: string, seq: number): Trigger => ({
  key,
  mode: 'submission',
  body: { id: 7, name: 's', owner: { id: 1, name: 'o' }, state: 'PENDING' },
  change_instance_id: 1,
  event_at: new Date(),
  resend_of: { seq, message_id: `msg_1_first${seq}`, recovery_id: 'rcv_1' },
});

/** A schedule applied as the repository applies plans (rateOnly keeps the window fields). */
function stores(start: Partial<ScheduleRecord> = {}) {
  let schedule: ScheduleRecord = { ...emptySchedule(1), ...start };
  const stored = new Map<string, ResponseRecord>();
  const schedules = {
    read: async () => schedule,
    tryFire: async (_id: number, plan: FirePlan) => {
      const { rate_count, ...next } = plan.next;
      const set = plan.rateOnly ? { rate_slot: next.rate_slot } : next;
      const count = typeof rate_count === 'number' ? rate_count : schedule.rate_count + rate_count.inc;
      schedule = { ...schedule, ...set, rate_count: count, seq: schedule.seq + plan.count };
      return schedule;
    },
    countSuppressed: async () => undefined,
  } as ScheduleStore;
  const responses = {
    insertMany: async (records: ResponseRecord[]) =>
      records.map((record) => {
        if (stored.has(record._id)) return false;
        stored.set(record._id, record);
        return true;
      }),
  } as unknown as ResponseStore;
  return { schedules, responses, stored, schedule: () => schedule };
}

function firing(s: ReturnType<typeof stores>, now: number, limit = 2) {
  return new ResendFiring(s.schedules, s.responses, {
    rateWindowMs: WINDOW,
    rateLimit: () => limit,
    leaseFor: () => null,
    unlease: () => undefined,
    deliverNow: () => undefined,
    dueLater: () => undefined,
    now: () => now,
  });
}

describe('ResendFiring', () => {
  it('numbers resends within the rate limit: a full window moves the rest to the next ones, never drops them', async () => {
    const s = stores();
    const now = 10 * WINDOW + 100;
    const resent = await firing(s, now).resend(
      webhook,
      [1, 2, 3, 4, 5].map((n) => resend(`k${n}`, n)),
    );
    expect(resent.map((one) => one.seq)).toEqual([1, 2, 3, 4, 5]);
    const dues = [...s.stored.values()].map((record) => Math.floor(record.due_at.getTime() / WINDOW));
    expect(dues).toEqual([10, 10, 11, 11, 12]);
    expect([...s.stored.values()].map((record) => record.resend_of?.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it("leaves the webhook's open wait window and cooling time alone", async () => {
    const s = stores({ window_end: 99_999, window_fire: 'msg_1_open', block_until: 99_999 });
    await firing(s, 5 * WINDOW).resend(webhook, [resend('k1', 1)]);
    expect(s.schedule()).toMatchObject({
      window_end: 99_999,
      window_fire: 'msg_1_open',
      block_until: 99_999,
    });
  });

  it('adds nothing for a resend asked again (same key): its number is a gap', async () => {
    const s = stores();
    const fire = firing(s, 5 * WINDOW, 100);
    await fire.resend(webhook, [resend('k1', 1), resend('k2', 2)]);
    const again = await fire.resend(webhook, [resend('k2', 2), resend('k3', 3)]);
    expect(again.map((one) => one.seq)).toEqual([null, 4]);
    expect(s.stored.size).toBe(3);
  });

  it('tells how many more the current rate window takes', async () => {
    const s = stores();
    const fire = firing(s, 5 * WINDOW + 10, 3);
    expect(fire.rateRoom(1)).toBe(3);
    await fire.resend(webhook, [resend('k1', 1), resend('k2', 2)]);
    expect(fire.rateRoom(1)).toBe(1);
  });
});
