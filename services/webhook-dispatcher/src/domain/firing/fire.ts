import { BoundedCache } from '@pack/cache';
import type { WebhookTriggerResult } from '@pack/contracts';
import { LOST_RACE, retryOnConflict } from '@pack/reliability';
import { blockedBy, emptySchedule, planFire, shapes, type FirePlan, type Shaping } from './firing-rules';
import type { ScheduleRecord, Trigger, WebhookRecord } from '../model';
import type { ResponseStore } from '../responses/store';
import type { ScheduleStore } from './store';
import { recordFires, type RecordOptions } from './record-fires';
import { RecordingSlots } from './recording-slots';
import { fireId, newResponse } from '../responses/response-record';

export interface FireObserver {
  fired(mode: Trigger['mode'], delayed: boolean): void;
  merged(): void;
  suppressed(): void;
}

export interface FiringOptions extends RecordOptions {
  rateWindowMs: number;
  /** webhook_rate_limit_per_minute, read live from the settings. */
  rateLimit: () => number;
  now?: () => number;
}

const MAX_ROUNDS = 50;
const MAX_BATCH = 100;
/** Batches of one webhook whose insert may run while the next batch is numbered. */
const MAX_RECORDING = 4;
const OPENER_WAIT_MS = 20;
/** How often a trigger tries to merge into an open window; the last try writes the window's fire itself. */
const MERGE_TRIES = 10;

const GUESSES = { maxEntries: 10_000, ttlMs: Infinity };

/**
 * Turns triggers into fires: wait windows merge, cooling suppresses, the rate limit delays. The
 * shared schedule is the only place a decision is made (conditional updates), so replicas agree;
 * the fire itself is written before the caller acknowledges the trigger, so none is lost.
 */
export class Firing {
  /** Last schedule seen per webhook, at most 10,000 (no TTL): a wrong guess costs only a re-read. */
  private readonly guesses = new BoundedCache<number, ScheduleRecord>(GUESSES);
  /** Triggers of unshaped webhooks waiting for the schedule update in progress (group commit). */
  private readonly batches = new Map<number, Waiting[]>();
  private readonly recording = new RecordingSlots(MAX_RECORDING);

  constructor(
    private readonly schedules: ScheduleStore,
    private readonly responses: ResponseStore,
    private readonly options: FiringOptions,
    private readonly observer: FireObserver,
  ) {}

  async trigger(webhook: WebhookRecord, trigger: Trigger): Promise<WebhookTriggerResult> {
    const shaping: Shaping = {
      waitMs: Math.round(webhook.trigger_wait_time * 1000),
      coolMs: Math.round(webhook.trigger_cooling_time * 1000),
      limit: this.options.rateLimit(),
      windowMs: this.options.rateWindowMs,
    };
    const id = fireId(webhook._id, trigger.key);
    if (!shapes(shaping)) return this.joinBatch(webhook, shaping, trigger, id);
    return this.fireOne(webhook, shaping, trigger, id);
  }

  /**
   * Simultaneous triggers of a webhook without wait or cooling time share one schedule update
   * and one insert: the schedule document is the one place all its fires meet, so under load it
   * would otherwise take them one at a time. The batches of a webhook are numbered one after
   * the other (each plans from the schedule the previous one left), but a batch's insert runs
   * while the next batch is numbered: a trigger that arrives during a batch waits for that
   * batch's schedule update only, not for its insert too.
   */
  private joinBatch(
    webhook: WebhookRecord,
    shaping: Shaping,
    trigger: Trigger,
    id: string,
  ): Promise<WebhookTriggerResult> {
    return new Promise((resolve, reject) => {
      const waiting = this.batches.get(webhook._id);
      const entry = { trigger, id, resolve, reject };
      if (waiting) {
        waiting.push(entry);
        return;
      }
      this.batches.set(webhook._id, [entry]);
      void this.drainBatches(webhook, shaping);
    });
  }

  private async drainBatches(webhook: WebhookRecord, shaping: Shaping): Promise<void> {
    for (;;) {
      await this.recording.room(webhook._id);
      const waiting = this.batches.get(webhook._id) ?? [];
      const batch = waiting.splice(0, MAX_BATCH);
      if (batch.length === 0) {
        this.batches.delete(webhook._id);
        return;
      }
      try {
        const numbered = await this.numberBatch(webhook, shaping, batch);
        if (numbered) {
          this.recording.track(webhook._id, this.recordBatch(webhook, batch, numbered));
          continue;
        }
        // The batch did not fit the rate window, or the guess was stale: one at a time.
        const results: WebhookTriggerResult[] = [];
        for (const entry of batch)
          results.push(await this.fireOne(webhook, shaping, entry.trigger, entry.id));
        batch.forEach((entry, index) => entry.resolve(results[index]!));
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
  }

  /** Numbers the batch's fires with one conditional schedule update; null when it did not apply. */
  private async numberBatch(
    webhook: WebhookRecord,
    shaping: Shaping,
    batch: Waiting[],
  ): Promise<Numbered | null> {
    const now = this.now();
    const schedule = this.guesses.get(webhook._id) ?? emptySchedule(webhook._id);
    const plan = planFire(schedule, now, shaping, batch[0]!.id, batch.length);
    const after = plan && (await this.schedules.tryFire(webhook._id, plan));
    if (plan && after) {
      this.guesses.set(webhook._id, after);
      return { first: after.seq - batch.length + 1, plan, now };
    }
    const fresh = await this.schedules.read(webhook._id);
    if (fresh) this.guesses.set(webhook._id, fresh);
    return null;
  }

  /** Inserts the numbered fires (a number whose insert fails is a gap) and answers the triggers. */
  private async recordBatch(webhook: WebhookRecord, batch: Waiting[], numbered: Numbered): Promise<void> {
    const { first, plan, now } = numbered;
    try {
      await recordFires(
        this.responses,
        this.options,
        webhook,
        batch.map((entry, index) => ({ ...entry, seq: first + index })),
        plan.due,
        now,
      );
      for (const entry of batch) this.observer.fired(entry.trigger.mode, plan.delayed);
      batch.forEach((entry, index) => entry.resolve({ outcome: 'scheduled', response_id: first + index }));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    }
  }

  private async fireOne(
    webhook: WebhookRecord,
    shaping: Shaping,
    trigger: Trigger,
    id: string,
  ): Promise<WebhookTriggerResult> {
    let schedule = this.guesses.get(webhook._id) ?? emptySchedule(webhook._id);
    return retryOnConflict(
      async () => {
        const now = this.now();
        const blocked = blockedBy(schedule, now, shaping);
        if (blocked === 'window') {
          const merged = await this.mergeInto(schedule, webhook, trigger, id);
          if (merged) return merged;
        } else if (blocked === 'cooling') {
          await this.schedules.countSuppressed(webhook._id);
          this.observer.suppressed();
          return { outcome: 'suppressed', response_id: null };
        } else {
          const plan = planFire(schedule, now, shaping, id)!;
          const after = await this.schedules.tryFire(webhook._id, plan);
          if (after) {
            this.guesses.set(webhook._id, after);
            await recordFires(
              this.responses,
              this.options,
              webhook,
              [{ trigger, id, seq: after.seq }],
              plan.due,
              now,
            );
            this.observer.fired(trigger.mode, plan.delayed);
            return { outcome: 'scheduled', response_id: after.seq };
          }
        }
        schedule = (await this.schedules.read(webhook._id)) ?? emptySchedule(webhook._id);
        this.guesses.set(webhook._id, schedule);
        return LOST_RACE;
      },
      {
        tries: MAX_ROUNDS,
        keptChanging: () =>
          new Error(`webhook ${webhook._id}: the schedule kept changing; the trigger will be retried`),
      },
    );
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /**
   * A trigger inside an open window: the latest event's body wins. If the opener has not written
   * the fire yet (or crashed before it did), this trigger writes it, so the window always fires.
   */
  private async mergeInto(
    schedule: ScheduleRecord,
    webhook: WebhookRecord,
    trigger: Trigger,
    id: string,
  ): Promise<WebhookTriggerResult | null> {
    const windowFire = schedule.window_fire!;
    return retryOnConflict(
      async (attempt) => {
        const merged = await this.responses.merge(windowFire, trigger);
        if (merged) {
          this.observer.merged();
          return { outcome: 'merged', response_id: merged.seq };
        }
        const existing = await this.responses.find(windowFire);
        if (existing) {
          if (existing.state !== 'SCHEDULED') return null; // the window closed meanwhile
          this.observer.merged(); // it holds a later trigger already
          return { outcome: 'merged', response_id: existing.seq };
        }
        const last = attempt === MERGE_TRIES;
        if (windowFire === id || last) {
          const record = newResponse(
            webhook,
            trigger,
            windowFire,
            // No fire can follow while the window is open, so the counter still holds the window's number.
            schedule.seq,
            new Date(schedule.window_end),
            null,
          );
          if (await this.responses.insert(record)) {
            this.options.dueLater(record.due_at);
            this.observer.merged();
            return { outcome: 'merged', response_id: record.seq };
          }
        }
        return last ? null : LOST_RACE;
      },
      {
        tries: MERGE_TRIES,
        // Another trigger opened the window: give its fire time to be written before looking again.
        ...(windowFire !== id && { pauseMs: () => OPENER_WAIT_MS }),
        keptChanging: () => new Error('never thrown: the last try answers null'),
      },
    );
  }
}

interface Numbered {
  first: number;
  plan: FirePlan;
  now: number;
}

interface Waiting {
  trigger: Trigger;
  id: string;
  resolve: (result: WebhookTriggerResult) => void;
  reject: (error: unknown) => void;
}
