import type { Delivery } from './deliver';
import type { ResponseRecord } from './model';
import type { ResponseStore } from './ports';
import { Scheduler } from './scheduler';

const silent = { warn: () => undefined, error: () => undefined } as never;

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
    await new Promise((resolve) => setTimeout(resolve, 20)); // the first claim is under way
    expect(claims).toBe(1);

    let stopped = false;
    const stopping = scheduler.stop().then(() => (stopped = true));
    answerClaim({ _id: 'msg_1_a', lease_token: 't' } as ResponseRecord);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sent).toEqual(['msg_1_a']);
    expect(stopped).toBe(false); // the delivery is still running
    finishDelivery();
    await stopping;
    expect(stopped).toBe(true);
    expect(claims).toBe(1); // and nothing more was claimed after stop()
  });
});
