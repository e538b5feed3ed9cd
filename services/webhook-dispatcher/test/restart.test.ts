import { call, waitFor } from '@pack/testkit';
import { changeInstance, events, owner, Receiver, startDispatcher, TEST_TUNING, WEBHOOKS } from './harness';

describe('no lost fire when the dispatcher dies mid-flight', () => {
  it('redelivers a fire whose process died before the answer, and fires events that arrived meanwhile', async () => {
    const receiver = await new Receiver().start();
    const env = { WEBHOOK_LEASE_MS: '1500' };
    const first = await startDispatcher({ env });
    await first.addService(7000, owner);
    const webhook = (
      await first.as(owner, 'POST', WEBHOOKS, {
        name: 'survives',
        description: '',
        service: 7000,
        target_url: receiver.url,
        authorization: 'Bearer x',
      })
    ).body;
    await first.stop({ keepData: true });

    // The same dispatcher as its own process, so the test can kill it the hard way.
    const processed = await first.spawn({
      env: { ...TEST_TUNING, ...env, LOG_LEVEL: 'silent' },
      what: 'dispatcher process ready',
    });
    let second: Awaited<ReturnType<typeof startDispatcher>> | undefined;
    try {
      receiver.next({ status: 200, hang: true });
      const fired = await call(processed.url, 'POST', `${WEBHOOKS}${webhook.id}/trigger/`, {
        principal: owner,
        body: {},
      });
      expect(fired.status).toBe(202);
      await receiver.received(1);
      processed.kill('SIGKILL');
      await processed.exited;

      // Nothing runs now: the event waits in the dispatcher's durable queue.
      await first.publish(events.changeInstanceCreated, {
        ...changeInstance(7000, 1, 'PENDING'),
        auto_approved: false,
      });

      second = await first.replica();
      const records = await waitFor(
        async () => {
          const all = await second!
            .collection('webhook_responses')
            .find({ webhook_id: webhook.id })
            .toArray();
          return all.length === 2 && all.every((r) => r.state === 'OK') ? all : undefined;
        },
        { what: 'both fires delivered' },
      );
      expect(records.map((r) => r.mode).sort()).toEqual(['manual', 'submission']);
      const manual = records.find((r) => r.mode === 'manual')!;
      const sentManual = receiver.requests.filter((r) => r.headers['webhook-id'] === String(manual._id));
      // Sent twice (the first answer was lost with the process), recorded once.
      expect(sentManual).toHaveLength(2);
      expect(receiver.requests).toHaveLength(3);
    } finally {
      processed.kill('SIGKILL');
      await (second ?? first).stop();
      await receiver.stop();
    }
  });
});
