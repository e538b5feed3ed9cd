import { blockedBy, emptySchedule, planFire, type Shaping } from './firing-rules';

const WINDOW = 60_000;
const plain: Shaping = { waitMs: 0, coolMs: 0, limit: 3, windowMs: WINDOW };
const at = (slot: number, offsetMs = 0) => slot * WINDOW + offsetMs;

describe('planFire', () => {
  it('fires now, in a fresh rate window, when nothing holds it', () => {
    const plan = planFire(emptySchedule(1), at(10, 5), plain, 'k')!;
    expect(plan).toMatchObject({
      due: at(10, 5),
      delayed: false,
      count: 1,
      expect: { freeAt: null, rate: { kind: 'older_than', slot: 10 } },
      next: { rate_slot: 10, rate_count: 1, window_end: 0, window_fire: null, block_until: at(10, 5) },
    });
  });

  it('counts into the current window while it has room, then moves to the next window', () => {
    const schedule = { ...emptySchedule(1), rate_slot: 10, rate_count: 2 };
    expect(planFire(schedule, at(10, 5), plain, 'k')).toMatchObject({
      due: at(10, 5),
      expect: { rate: { kind: 'room', slot: 10, max: 2 } },
      next: { rate_count: { inc: 1 } },
    });
    const full = { ...schedule, rate_count: 3 };
    expect(planFire(full, at(10, 5), plain, 'k')).toMatchObject({
      due: at(11),
      delayed: true,
      expect: { rate: { kind: 'full', slot: 10, limit: 3 } },
      next: { rate_slot: 11, rate_count: 1 },
    });
  });

  it('keeps filling a later window that delayed fires already opened', () => {
    const schedule = { ...emptySchedule(1), rate_slot: 12, rate_count: 1 };
    expect(planFire(schedule, at(10, 5), plain, 'k')).toMatchObject({ due: at(12), delayed: true });
  });

  it('opens a wait window that ends waitMs after the first trigger, cooling after it', () => {
    const shaping = { ...plain, waitMs: 5000, coolMs: 30_000 };
    expect(planFire(emptySchedule(1), at(10, 100), shaping, 'first')).toMatchObject({
      due: at(10, 5100),
      expect: { freeAt: at(10, 100) },
      next: { window_end: at(10, 5100), window_fire: 'first', block_until: at(10, 35_100) },
    });
  });

  it('plans a batch only when it fits one window', () => {
    const schedule = { ...emptySchedule(1), rate_slot: 10, rate_count: 1 };
    expect(planFire(schedule, at(10), plain, 'k', 2)).toMatchObject({
      count: 2,
      next: { rate_count: { inc: 2 } },
    });
    expect(planFire(schedule, at(10), plain, 'k', 3)).toBeNull();
    expect(planFire(emptySchedule(1), at(10), plain, 'k', 4)).toBeNull();
  });
});

describe('blockedBy', () => {
  const shaped = { ...plain, waitMs: 1000, coolMs: 10_000 };
  const schedule = { ...emptySchedule(1), window_fire: 'f', window_end: 2000, block_until: 12_000 };

  it('merges inside the window, suppresses in the cooling time, lets through after it', () => {
    expect(blockedBy(schedule, 1999, shaped)).toBe('window');
    expect(blockedBy(schedule, 2000, shaped)).toBe('cooling');
    expect(blockedBy(schedule, 11_999, shaped)).toBe('cooling');
    expect(blockedBy(schedule, 12_000, shaped)).toBeNull();
  });

  it('never blocks a webhook without wait and cooling time', () => {
    expect(blockedBy(schedule, 1000, plain)).toBeNull();
  });
});
