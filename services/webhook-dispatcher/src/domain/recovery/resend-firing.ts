import { BoundedCache } from '@pack/cache';
import { emptySchedule, planFire, type Shaping } from '../firing/firing-rules';
import type { FiringOptions } from '../firing/fire';
import type { ScheduleRecord, Trigger, WebhookRecord } from '../model';
import type { ResponseStore } from '../responses/store';
import type { ScheduleStore } from '../firing/store';
import { recordFires } from '../firing/record-fires';
import { fireId } from '../responses/response-record';

const MAX_ROUNDS = 50;
const MAX_BATCH = 100;

type Options = Pick<
  FiringOptions,
  'rateWindowMs' | 'rateLimit' | 'leaseFor' | 'unlease' | 'deliverNow' | 'dueLater' | 'now'
>;

/** One resend as asked: the trigger carries `resend_of`; its key makes the new response's id. */
export interface Resent {
  /** The new response's number, or null when a response with its id existed already (a repeat). */
  seq: number | null;
  id: string;
}

/**
 * Numbers and records resends. They take a number and a place in the rate limit like
 * any fire (conditional updates of the schedule, docs/decisions/0014), but not the wait window
 * or the cooling time: a resend is not a new trigger, it must neither merge nor be suppressed,
 * and it leaves the webhook's open window alone (`rateOnly`). Beyond the rate limit a resend is
 * delayed to the next window with room, never dropped. A resend's id comes from its key, so a
 * repeated request (a recovery batch run again after a crash) finds it and adds none.
 */
export class ResendFiring {
  /** Last schedule seen per webhook, at most 10,000: a wrong guess costs a re-read. */
  private readonly guesses = new BoundedCache<number, ScheduleRecord>({
    maxEntries: 10_000,
    ttlMs: Infinity,
  });

  constructor(
    private readonly schedules: ScheduleStore,
    private readonly responses: ResponseStore,
    private readonly options: Options,
  ) {}

  /**
   * How many more fires the webhook's rate window takes now, from the last schedule this replica
   * saw: a recovery queues no more than that, so it runs as fast as the rate limit allows and no
   * faster (a stale view only delays a resend to the next window, 0014).
   */
  rateRoom(webhookId: number): number {
    const limit = this.options.rateLimit();
    const schedule = this.guesses.get(webhookId);
    if (!schedule) return limit;
    const slot = Math.floor((this.options.now ?? Date.now)() / this.options.rateWindowMs);
    return schedule.rate_slot >= slot ? Math.max(0, limit - schedule.rate_count) : limit;
  }

  async resend(webhook: WebhookRecord, triggers: Trigger[]): Promise<Resent[]> {
    const shaping: Shaping = {
      waitMs: 0,
      coolMs: 0,
      limit: this.options.rateLimit(),
      windowMs: this.options.rateWindowMs,
    };
    const results: Resent[] = [];
    let schedule = this.guesses.get(webhook._id) ?? emptySchedule(webhook._id);
    let rounds = 0;
    while (results.length < triggers.length) {
      if (rounds++ > MAX_ROUNDS * Math.ceil(triggers.length / MAX_BATCH) + MAX_ROUNDS)
        throw new Error(`webhook ${webhook._id}: the schedule kept changing; the resend will be retried`);
      const now = (this.options.now ?? Date.now)();
      const left = triggers.slice(results.length, results.length + MAX_BATCH);
      const wanted = Math.floor(now / shaping.windowMs);
      const room = schedule.rate_slot >= wanted ? shaping.limit - schedule.rate_count : shaping.limit;
      const count = Math.max(1, Math.min(left.length, room));
      const ids = left.slice(0, count).map((trigger) => fireId(webhook._id, trigger.key));
      const plan = planFire(schedule, now, shaping, ids[0]!, count);
      const after = plan && (await this.schedules.tryFire(webhook._id, { ...plan, rateOnly: true }));
      if (!plan || !after) {
        schedule = (await this.schedules.read(webhook._id)) ?? emptySchedule(webhook._id);
        this.guesses.set(webhook._id, schedule);
        continue;
      }
      schedule = after;
      this.guesses.set(webhook._id, after);
      const first = after.seq - count + 1;
      const entries = left
        .slice(0, count)
        .map((trigger, index) => ({ trigger, id: ids[index]!, seq: first + index }));
      const inserted = await recordFires(this.responses, this.options, webhook, entries, plan.due, now);
      ids.forEach((id, index) => results.push({ id, seq: inserted[index] ? first + index : null }));
    }
    return results;
  }
}
