import { createEnvelope, events } from '@pack/contracts';
import { createLogger } from '@pack/logging';
import { deliver, on, type ConsumerSpec, type Delivery } from './index';

const silent = createLogger({ service: 'test', version: '0', level: 'silent' });

function message(data: unknown = { groups: ['smtp'], version: 4, changed_by: null }): Buffer {
  const envelope = createEnvelope(
    events.settingsChanged,
    { groups: ['smtp'], version: 4, changed_by: null },
    { source: 'test', correlationId: 'c' },
  );
  return Buffer.from(JSON.stringify({ ...envelope, data }));
}

/** A fake channel that records what was done with the message. */
function delivery(content: Buffer, overrides: Partial<Delivery> = {}) {
  const calls: string[] = [];
  const fake: Delivery = {
    content,
    messageId: 'm1',
    previousAttempts: 0,
    ack: () => calls.push('ack'),
    nack: (requeue) => calls.push(requeue ? 'requeue' : 'dead-letter'),
    retryLater: async (attempts) => {
      calls.push(`retry after attempt ${attempts}`);
    },
    ...overrides,
  };
  return { fake, calls };
}

function spec(handle: () => Promise<void>, extra: Partial<ConsumerSpec> = {}): ConsumerSpec {
  return { name: 'unit', handlers: [on(events.settingsChanged, handle)], maxAttempts: 3, ...extra };
}

describe('settling a delivery', () => {
  it('acknowledges after the handler succeeded', async () => {
    let runs = 0;
    const { fake, calls } = delivery(message());
    const outcome = await deliver(
      spec(async () => {
        runs += 1;
      }),
      fake,
      silent,
    );
    expect({ outcome, calls, runs }).toEqual({ outcome: 'ack', calls: ['ack'], runs: 1 });
  });

  it('treats an acknowledgement that throws as a settling problem, not a handler failure: no retry is scheduled', async () => {
    let runs = 0;
    const { fake, calls } = delivery(message(), {
      ack: () => {
        throw new Error('Channel closed');
      },
    });
    const outcome = await deliver(
      spec(async () => {
        runs += 1;
      }),
      fake,
      silent,
    );
    expect({ outcome, calls, runs }).toEqual({ outcome: 'settle_failed', calls: [], runs: 1 });
  });

  it('schedules a delayed retry for a failed handler, then acknowledges the original', async () => {
    const { fake, calls } = delivery(message());
    const outcome = await deliver(
      spec(() => Promise.reject(new Error('down'))),
      fake,
      silent,
    );
    expect({ outcome, calls }).toEqual({ outcome: 'retry', calls: ['retry after attempt 1', 'ack'] });
  });

  it('dead-letters after the last attempt', async () => {
    const { fake, calls } = delivery(message(), { previousAttempts: 2 });
    const outcome = await deliver(
      spec(() => Promise.reject(new Error('down'))),
      fake,
      silent,
    );
    expect({ outcome, calls }).toEqual({ outcome: 'dead_letter', calls: ['dead-letter'] });
  });

  it('gives the message back when the retry cannot be scheduled', async () => {
    const { fake, calls } = delivery(message(), { retryLater: () => Promise.reject(new Error('no broker')) });
    const outcome = await deliver(
      spec(() => Promise.reject(new Error('down'))),
      fake,
      silent,
    );
    expect({ outcome, calls }).toEqual({ outcome: 'requeued', calls: ['requeue'] });
  });

  it('dead-letters a payload that breaks the event schema without running the handler', async () => {
    let runs = 0;
    const { fake, calls } = delivery(message({ groups: 'smtp', version: 4, changed_by: null }));
    const outcome = await deliver(
      spec(async () => {
        runs += 1;
      }),
      fake,
      silent,
    );
    expect({ outcome, calls, runs }).toEqual({ outcome: 'invalid', calls: ['dead-letter'], runs: 0 });
  });

  it('drops, never dead-letters or retries, what a broadcast consumer cannot handle', async () => {
    const failing = delivery(message());
    const invalid = delivery(Buffer.from('not json'));
    const broadcast = spec(() => Promise.reject(new Error('down')), { broadcast: true });
    expect(await deliver(broadcast, failing.fake, silent)).toBe('dropped');
    expect(await deliver(broadcast, invalid.fake, silent)).toBe('dropped');
    expect([...failing.calls, ...invalid.calls]).toEqual(['ack', 'ack']);
  });
});
