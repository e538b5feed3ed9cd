import { createEnvelope, events } from '@pack/contracts';
import { createLogger } from '@pack/logging';
import {
  BrokerUnavailableError,
  deliver,
  on,
  PublishNackedError,
  RetryLater,
  type ConsumerSpec,
  type Delivery,
} from './index';

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

/** A consumer whose handler succeeds and counts its runs. */
function counting() {
  const counter = { runs: 0 };
  return Object.assign(counter, {
    spec: spec(async () => {
      counter.runs += 1;
    }),
  });
}

const failing = () => spec(() => Promise.reject(new Error('down')));

describe('settling a delivery', () => {
  it('acknowledges after the handler succeeded', async () => {
    const handler = counting();
    const { fake, calls } = delivery(message());
    const outcome = await deliver(handler.spec, fake, silent);
    expect({ outcome, calls, runs: handler.runs }).toEqual({ outcome: 'ack', calls: ['ack'], runs: 1 });
  });

  it('treats an acknowledgement that throws as a settling problem, not a handler failure: no retry is scheduled', async () => {
    const handler = counting();
    const { fake, calls } = delivery(message(), {
      ack: () => {
        throw new Error('Channel closed');
      },
    });
    const outcome = await deliver(handler.spec, fake, silent);
    expect({ outcome, calls, runs: handler.runs }).toEqual({ outcome: 'settle_failed', calls: [], runs: 1 });
  });

  it.each([
    [
      'schedules a delayed retry, then acknowledges the original',
      {},
      'retry',
      ['retry after attempt 1', 'ack'],
    ],
    ['dead-letters it after the last attempt', { previousAttempts: 2 }, 'dead_letter', ['dead-letter']],
    [
      'gives the message back when the retry cannot be scheduled',
      { retryLater: () => Promise.reject(new Error('no broker')) },
      'requeued',
      ['requeue'],
    ],
  ] as const)('a failed handler: %s', async (_case, overrides: Partial<Delivery>, outcome, calls) => {
    const settled = delivery(message(), overrides);
    expect(await deliver(failing(), settled.fake, silent)).toBe(outcome);
    expect(settled.calls).toEqual(calls);
  });

  it('defers a message whose handler asks to wait, without using up an attempt, even at the last one', async () => {
    const waiting = spec(() => Promise.reject(new RetryLater('held by another worker')));
    const settled = delivery(message(), { previousAttempts: 2 });
    expect(await deliver(waiting, settled.fake, silent)).toBe('deferred');
    expect(settled.calls).toEqual(['retry after attempt 2', 'ack']);
  });

  it('defers a message whose handler met a dependency away for a while (the database), never counting the attempt: no outage dead-letters it', async () => {
    const away = Object.assign(new Error('connect ECONNREFUSED'), { name: 'MongoServerSelectionError' });
    const transient = (error: unknown) =>
      error instanceof Error && error.name === 'MongoServerSelectionError';
    const failingOnDatabase = spec(() => Promise.reject(away));
    // At the last attempt the consumer allows, a transient failure still waits instead.
    const settled = delivery(message(), { previousAttempts: 2 });
    expect(await deliver(failingOnDatabase, settled.fake, silent, transient)).toBe('deferred');
    expect(settled.calls).toEqual(['retry after attempt 2', 'ack']);
    // Any other failure uses up the attempt.
    const other = delivery(message(), { previousAttempts: 2 });
    expect(await deliver(failing(), other.fake, silent, transient)).toBe('dead_letter');
  });

  it.each([
    ['nacked (not stored, a quorum queue electing its leader)', () => new PublishNackedError()],
    ['not confirmed in time', () => new BrokerUnavailableError('no publish confirm within 5000 ms')],
    ['impossible (no broker connection)', () => new BrokerUnavailableError()],
  ])(
    'defers a message whose handler could not publish its result, the broker %s: broker trouble never uses up an attempt',
    async (_case, brokerError) => {
      const publishing = spec(() => Promise.reject(brokerError()));
      // At the last attempt the consumer allows, and with no `transient` predicate given.
      const settled = delivery(message(), { previousAttempts: 2 });
      expect(await deliver(publishing, settled.fake, silent)).toBe('deferred');
      expect(settled.calls).toEqual(['retry after attempt 2', 'ack']);
    },
  );

  it('dead-letters a payload that breaks the event schema without running the handler', async () => {
    const handler = counting();
    const { fake, calls } = delivery(message({ groups: 'smtp', version: 4, changed_by: null }));
    const outcome = await deliver(handler.spec, fake, silent);
    expect({ outcome, calls, runs: handler.runs }).toEqual({
      outcome: 'invalid',
      calls: ['dead-letter'],
      runs: 0,
    });
  });

  it('drops, never dead-letters or retries, what a broadcast consumer cannot handle', async () => {
    const failed = delivery(message());
    const invalid = delivery(Buffer.from('not json'));
    const broadcast = { ...failing(), broadcast: true };
    expect(await deliver(broadcast, failed.fake, silent)).toBe('dropped');
    expect(await deliver(broadcast, invalid.fake, silent)).toBe('dropped');
    expect([...failed.calls, ...invalid.calls]).toEqual(['ack', 'ack']);
  });
});
