import type { ScheduleRecord } from '../model';

/** The shaping of one webhook: its own times and the administrators' rate limit. */
export interface Shaping {
  waitMs: number;
  coolMs: number;
  /** Fires per rate window (webhook_rate_limit_per_minute). */
  limit: number;
  windowMs: number;
}

export type RateExpectation =
  | { kind: 'older_than'; slot: number }
  /** The slot is still this one and holds at most `max` fires. */
  | { kind: 'room'; slot: number; max: number }
  | { kind: 'full'; slot: number; limit: number };

/**
 * A fire, planned from a (possibly stale) view of the schedule. The store applies `next` only if
 * the schedule still meets `expect`, in one conditional update; otherwise the caller re-reads and
 * plans again. So two replicas can never both open a window or both take the last rate slot.
 */
export interface FirePlan {
  expect: { freeAt: number | null; rate: RateExpectation };
  /** Fires this plan numbers (a batch of simultaneous triggers of one unshaped webhook). */
  count: number;
  next: {
    rate_slot: number;
    /** `{inc}` adds to the stored count; a number replaces it. */
    rate_count: { inc: number } | number;
    window_end: number;
    window_fire: string | null;
    block_until: number;
  };
  /** When the request goes out (epoch ms). */
  due: number;
  /** True when the rate limit pushed the fire past the time it was wanted. */
  delayed: boolean;
  /**
   * Only the rate window and the numbering change (a resend): the wait window and the
   * cooling time of the webhook's own triggers are left as they are.
   */
  rateOnly?: boolean;
}

export function shapes(shaping: Shaping): boolean {
  return shaping.waitMs > 0 || shaping.coolMs > 0;
}

/** What a trigger at `now` meets: an open wait window, the cooling time, or nothing. */
export function blockedBy(
  schedule: ScheduleRecord,
  now: number,
  shaping: Shaping,
): 'window' | 'cooling' | null {
  if (!shapes(shaping)) return null;
  if (schedule.window_fire !== null && now < schedule.window_end) return 'window';
  if (now < schedule.block_until) return 'cooling';
  return null;
}

/**
 * The fire a trigger at `now` opens. A wait window ends `waitMs` from its first trigger (so a
 * steady stream still fires once per window: the window is its own maximum wait); the cooling
 * time runs from the fire. The rate limit counts fires per window of `windowMs`; a full window
 * moves the fire to the start of the next one that has room, never drops it.
 */
export function planFire(
  schedule: ScheduleRecord,
  now: number,
  shaping: Shaping,
  fireKey: string,
  fires = 1,
): FirePlan | null {
  const wanted = now + shaping.waitMs;
  const slotOfWanted = Math.floor(wanted / shaping.windowMs);
  let rate: RateExpectation;
  let slot: number;
  let count: { inc: number } | number;
  if (schedule.rate_slot < slotOfWanted && fires <= shaping.limit) {
    rate = { kind: 'older_than', slot: slotOfWanted };
    slot = slotOfWanted;
    count = fires;
  } else if (schedule.rate_slot >= slotOfWanted && schedule.rate_count + fires <= shaping.limit) {
    rate = { kind: 'room', slot: schedule.rate_slot, max: shaping.limit - fires };
    slot = schedule.rate_slot;
    count = { inc: fires };
  } else if (fires === 1 && schedule.rate_slot >= slotOfWanted) {
    rate = { kind: 'full', slot: schedule.rate_slot, limit: shaping.limit };
    slot = schedule.rate_slot + 1;
    count = 1;
  } else {
    return null; // a batch that does not fit one window goes one fire at a time
  }
  const due = Math.max(wanted, slot * shaping.windowMs);
  const windowed = shaping.waitMs > 0;
  return {
    expect: { freeAt: shapes(shaping) ? now : null, rate },
    count: fires,
    next: {
      rate_slot: slot,
      rate_count: count,
      window_end: windowed ? due : 0,
      window_fire: windowed ? fireKey : null,
      block_until: due + shaping.coolMs,
    },
    due,
    delayed: due > wanted,
  };
}

/** The schedule of a webhook that never fired. */
export function emptySchedule(webhookId: number): ScheduleRecord {
  return {
    _id: webhookId,
    seq: 0,
    window_end: 0,
    window_fire: null,
    block_until: 0,
    rate_slot: -1,
    rate_count: 0,
    suppressed: 0,
  };
}
