import type { Delivery } from './deliver';
import type { ResponseRecord } from '../model';
import type { ResponseStore } from '../responses/store';
import { Scheduler, WRITES_PER_SLOT } from './scheduler';

const silent = { warn: () => undefined, error: () => undefined } as never;

/** Lets pending work run until `condition` holds (no sleeping: each turn is one pass of the event loop). */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 1000; turn += 1) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`still waiting for ${what}`);
}

describe('Scheduler.stop', () => {
  it('waits for a fire claimed while it was stopping, so the delivery is not cut short by the exit', async () => {
    let answerClaim!: (record: ResponseRecord | null) => void;
    let claims = 0;
    const store = {
      claim: () => {
        claims += 1;
        return claims === 1 ? new Promise((resolve) => (answerClaim = resolve)) : Promise.resolve(null);
      },
      trim: async () => undefined,
      backlog: async () => 0,
    } as unknown as ResponseStore;
    const sent: string[] = [];
    let finishDelivery!: () => void;
    const delivery = {
      deliver: (record: ResponseRecord) => {
        sent.push(record._id);
        return new Promise<void>((resolve) => (finishDelivery = resolve));
      },
    } as unknown as Delivery;
    const scheduler = new Scheduler(store, delivery, {
      concurrency: 5,
      pollMs: 10_000,
      leaseMs: 30_000,
      retentionSweepMs: 10_000,
      retention: () => 100,
      logger: silent,
    });
    scheduler.start();
    await until(() => claims === 1, 'the first claim');

    let stopped = false;
    const stopping = scheduler.stop().then(() => (stopped = true));
    answerClaim({ _id: 'msg_1_a', lease_token: 't' } as ResponseRecord);
    await until(() => sent.length > 0, 'the claimed fire to be sent');
    expect(sent).toEqual(['msg_1_a']);
    // The delivery is still running: stop() stays pending however long the event loop turns.
    await expect(until(() => stopped, 'stop() to end')).rejects.toThrow('still waiting');
    finishDelivery();
    await stopping;
    expect(stopped).toBe(true);
    expect(claims).toBe(1); // and nothing more was claimed after stop()
  });
});

describe('Scheduler slots', () => {
  const store = {
    claim: async () => null,
    trim: async () => 0,
    backlog: async () => 0,
  } as unknown as ResponseStore;
  const options = {
    concurrency: 1,
    pollMs: 10_000,
    leaseMs: 30_000,
    retentionSweepMs: 10_000,
    retention: () => 100,
    logger: silent,
  };
  /** Deliveries the test answers (the target) and then finishes (the result written). */
  function deliveries() {
    const running: { answer: () => void; finish: () => void }[] = [];
    const delivery = {
      deliver: (_record: ResponseRecord, _token: string, _known: unknown, answered: () => void) =>
        new Promise<void>((resolve) => running.push({ answer: answered, finish: resolve })),
    } as unknown as Delivery;
    return { delivery, running };
  }
  const send = (scheduler: Scheduler, n: number) => {
    const lease = scheduler.leaseFor();
    if (!lease) return false;
    scheduler.deliverNow({ _id: `msg_1_${n}`, lease_token: lease.token } as ResponseRecord, {} as never);
    return true;
  };

  it('gives a slot back once the target answered, while the result is still being written', async () => {
    const { delivery, running } = deliveries();
    const scheduler = new Scheduler(store, delivery, options);
    scheduler.start();
    expect(send(scheduler, 1)).toBe(true);
    expect(send(scheduler, 2)).toBe(false); // one slot, taken
    running[0]!.answer();
    expect(send(scheduler, 3)).toBe(true);
    running[1]!.answer();
    running[0]!.finish();
    running[1]!.finish();
    await scheduler.stop();
  });

  it('keeps the slot until the write ends once WRITES_PER_SLOT writes per slot are pending, and stop() waits for the writes', async () => {
    const { delivery, running } = deliveries();
    const scheduler = new Scheduler(store, delivery, options);
    scheduler.start();
    const full = WRITES_PER_SLOT * options.concurrency;
    for (let n = 0; n < full; n += 1) {
      expect(send(scheduler, n)).toBe(true);
      running[n]!.answer();
    }
    expect(send(scheduler, full)).toBe(true);
    running[full]!.answer(); // one pending write too many: the slot stays taken
    expect(send(scheduler, full + 1)).toBe(false);
    running[0]!.finish();
    await new Promise((resolve) => setImmediate(resolve));
    expect(send(scheduler, full + 1)).toBe(false); // a write ended, but the last one still holds its slot
    running[full]!.finish();
    await new Promise((resolve) => setImmediate(resolve));
    expect(send(scheduler, full + 1)).toBe(true);

    let stopped = false;
    const stopping = scheduler.stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    for (const delivery of running.slice(1)) delivery.finish();
    await stopping;
  });
});
