import { Webhook } from 'standardwebhooks';
import { LeakScan, seededSecret, waitFor } from '@pack/testkit';
import {
  admin,
  otherOwner,
  owner,
  Receiver,
  RECEIVER_AUTHORIZATION,
  startDispatcher,
  WEBHOOKS,
  webhookOnNewService,
  type DispatcherHarness,
  type Received,
} from './harness';

/** The webhook's secrets do not leave through a changed URL, a header, a race or an oracle. */
describe('webhook secrets', () => {
  let dispatcher: DispatcherHarness;
  let receiver: Receiver;
  let elsewhere: Receiver;
  /** Every log line of the dispatcher, at debug level, scanned for the secrets of the last test. */
  const leaks = new LeakScan();
  const log = leaks.logDestination('dispatcher log');
  const material = (label = 'an authorization') => seededSecret(label, { length: 24 });
  const secrets = {
    first: material('the first'),
    second: material('the second'),
    refused: material('the refused'),
  };
  const ELSEWHERE = `Bearer elsewhere-token-${seededSecret('the elsewhere authorization', { suffix: '0002' })}`;

  beforeAll(async () => {
    for (const [label, secret] of Object.entries(secrets)) leaks.seed(`the ${label} authorization`, secret);
    dispatcher = await startDispatcher({ env: { LOG_LEVEL: 'debug' }, logDestination: log });
    receiver = await new Receiver().start();
    elsewhere = await new Receiver().start();
  });
  afterAll(async () => {
    await receiver.stop();
    await elsewhere.stop();
    await dispatcher.stop();
  });

  const path = (id: number, rest = '') => `${WEBHOOKS}${id}/${rest}`;
  const storedWebhook = (id: number) => dispatcher.collection('webhooks').findOne({ _id: id as never });
  const verifies = (secret: string, request: Received) => {
    try {
      new Webhook(secret).verify(request.body, {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      });
      return true;
    } catch {
      return false;
    }
  };
  /** Fires the webhook by hand and returns the request `target` received. */
  const fire = async (id: number, target: Receiver, by = owner) => {
    const before = target.requests.length;
    expect((await dispatcher.as(by, 'POST', path(id, 'trigger/'), {})).status).toBe(202);
    return (await target.received(before + 1))[before]!;
  };

  describe('"Changing a webhook\'s target_url requires sending authorization again"', () => {
    it('refuses a new target_url without authorization with 400 naming authorization, and changes nothing', async () => {
      const { webhook } = await webhookOnNewService(dispatcher, receiver.url);
      const before = await storedWebhook(webhook.id);
      const reply = await dispatcher.as(owner, 'PATCH', path(webhook.id), {
        target_url: elsewhere.url,
        name: 'moved',
      });
      expect(reply.status).toBe(400);
      expect(reply.headers.get('content-type')).toContain('application/problem+json');
      expect(reply.body.errors).toEqual({
        authorization: [
          'must be sent again when target_url changes: the stored one is never sent to a new URL ("" for none)',
        ],
      });
      expect(await storedWebhook(webhook.id)).toEqual(before);
      const request = await fire(webhook.id, receiver);
      expect(request.headers.authorization).toBe(RECEIVER_AUTHORIZATION);
    });

    it('refuses the masked authorization sent back with a new target_url', async () => {
      const { webhook } = await webhookOnNewService(dispatcher, receiver.url);
      const reply = await dispatcher.as(admin, 'PATCH', path(webhook.id), {
        target_url: elsewhere.url,
        authorization: '********0001',
      });
      expect(reply.status).toBe(400);
      expect(Object.keys(reply.body.errors)).toEqual(['authorization']);
    });

    it('sends the new authorization, or none, to the new URL; never the stored one', async () => {
      const { webhook } = await webhookOnNewService(dispatcher, receiver.url);
      const moved = await dispatcher.as(owner, 'PATCH', path(webhook.id), {
        target_url: elsewhere.url,
        authorization: ELSEWHERE,
      });
      expect(moved.status).toBe(200);
      expect(moved.body).toMatchObject({ target_url: elsewhere.url, authorization: '********0002' });
      expect((await fire(webhook.id, elsewhere)).headers.authorization).toBe(ELSEWHERE);

      const bare = await dispatcher.as(owner, 'PATCH', path(webhook.id), {
        target_url: receiver.url,
        authorization: '',
      });
      expect(bare.body).toMatchObject({ target_url: receiver.url, authorization: '' });
      expect((await fire(webhook.id, receiver)).headers.authorization).toBeUndefined();
    });

    it('needs nothing when the URL stays the same or no authorization is stored', async () => {
      const { webhook } = await webhookOnNewService(dispatcher, receiver.url);
      const same = await dispatcher.as(owner, 'PATCH', path(webhook.id), {
        target_url: receiver.url,
        name: 'same URL',
      });
      expect(same.body).toMatchObject({ name: 'same URL', authorization: '********0001' });
      const { webhook: bare } = await webhookOnNewService(dispatcher, receiver.url, { authorization: '' });
      const moved = await dispatcher.as(owner, 'PATCH', path(bare.id), { target_url: elsewhere.url });
      expect(moved.status).toBe(200);
      expect(moved.body).toMatchObject({ target_url: elsewhere.url, authorization: '' });
    });

    it('clears the authorization when the Service passes to another owner, and keeps it on a rename', async () => {
      const { service, webhook } = await webhookOnNewService(dispatcher, receiver.url);
      await dispatcher.addService(service, owner, 'Renamed service');
      expect((await dispatcher.as(owner, 'GET', path(webhook.id))).body.authorization).toBe('********0001');

      await dispatcher.addService(service, otherOwner);
      const moved = await waitFor(async () => {
        const reply = await dispatcher.as(otherOwner, 'GET', path(webhook.id));
        return reply.status === 200 && reply.body;
      });
      expect(moved).toMatchObject({ owner: { id: otherOwner.id }, authorization: '' });
      const request = await fire(webhook.id, receiver, otherOwner);
      expect(request.headers.authorization).toBeUndefined();
      // The new owner may point it elsewhere now: there is no stored authorization to take along.
      const redirected = await dispatcher.as(otherOwner, 'PATCH', path(webhook.id), {
        target_url: elsewhere.url,
      });
      expect(redirected.status).toBe(200);
    });
  });

  describe('"Secrets and header values with CR, LF or NUL are refused at write time"', () => {
    it.each([
      ['CR LF', 'Bearer crlf\r\nX-Injected: yes'],
      ['LF', 'Bearer lf\nX-Injected: yes'],
      ['CR', 'Bearer cr\rX'],
      ['NUL', 'Bearer nul\u0000X'],
    ])('refuses an authorization with %s: 400 naming authorization, nothing stored', async (_what, value) => {
      await dispatcher.addService(90, owner);
      const count = await dispatcher.collection('webhooks').countDocuments();
      const created = await dispatcher.as(owner, 'POST', WEBHOOKS, {
        name: 'crlf',
        service: 90,
        target_url: receiver.url,
        authorization: value,
      });
      expect(created.status).toBe(400);
      expect(Object.keys(created.body.errors)).toEqual(['authorization']);
      expect(await dispatcher.collection('webhooks').countDocuments()).toBe(count);

      const { webhook } = await webhookOnNewService(dispatcher, receiver.url);
      const before = await storedWebhook(webhook.id);
      const patched = await dispatcher.as(owner, 'PATCH', path(webhook.id), { authorization: value });
      expect(patched.status).toBe(400);
      expect(Object.keys(patched.body.errors)).toEqual(['authorization']);
      expect(await storedWebhook(webhook.id)).toEqual(before);
    });
  });

  describe('"Rotation is atomic: concurrent rotations give one winner; the others get 409"', () => {
    it('answers one of 20 concurrent rotations with the new secret, the others 409; the winner signs', async () => {
      const { webhook } = await webhookOnNewService(dispatcher, receiver.url);
      const replies = await Promise.all(
        Array.from({ length: 20 }, () => dispatcher.as(owner, 'POST', path(webhook.id, 'rotate_secret/'))),
      );
      const statuses = replies.map((reply) => reply.status).sort();
      expect(statuses).toEqual([200, ...Array<number>(19).fill(409)]);
      const winner = replies.find((reply) => reply.status === 200)!.body.secret as string;
      for (const loser of replies.filter((reply) => reply.status === 409)) {
        expect(loser.headers.get('content-type')).toContain('application/problem+json');
        expect(loser.text).not.toContain('whsec_');
      }
      const request = await fire(webhook.id, receiver);
      expect(verifies(winner, request)).toBe(true);
      expect(verifies(webhook.secret, request)).toBe(false);
    });

    it('answers a rotation right after another with 409, and rotates again once the guard time is over', async () => {
      const { webhook } = await webhookOnNewService(dispatcher, receiver.url);
      const first = await dispatcher.as(owner, 'POST', path(webhook.id, 'rotate_secret/'));
      expect(first.status).toBe(200);
      const second = await dispatcher.as(owner, 'POST', path(webhook.id, 'rotate_secret/'));
      expect(second.status).toBe(409);
      expect(second.body.detail).toBe(
        'the signing secret was rotated less than 5 seconds ago; the secret that rotation answered is the one in use',
      );
      // As if the guard time had passed: the rotation time moved back by 6 seconds.
      await dispatcher
        .collection('webhooks')
        .updateOne(
          { _id: webhook.id as never },
          { $set: { secret_rotated_at: new Date(Date.now() - 6000) } },
        );
      const third = await dispatcher.as(owner, 'POST', path(webhook.id, 'rotate_secret/'));
      expect(third.status).toBe(200);
      expect(verifies(third.body.secret, await fire(webhook.id, receiver))).toBe(true);
    });
  });

  describe('"The same answer for another owner\'s Service and a missing one"', () => {
    it("answers creating a webhook on a missing Service and on another owner's alike, storing nothing", async () => {
      await dispatcher.addService(91, otherOwner);
      const body = (service: number) => ({ name: 'probe', service, target_url: receiver.url });
      const count = await dispatcher.collection('webhooks').countDocuments();
      const theirs = await dispatcher.as(owner, 'POST', WEBHOOKS, body(91));
      const missing = await dispatcher.as(owner, 'POST', WEBHOOKS, body(92));
      expect(theirs.status).toBe(400);
      expect(theirs.body.errors).toEqual({ service: ['no Service with id 91 that you own'] });
      expect(missing.body.errors).toEqual({ service: ['no Service with id 92 that you own'] });
      const { errors: _theirs, ...theirRest } = theirs.body;
      const { errors: _missing, ...missingRest } = missing.body;
      expect(theirRest).toEqual(missingRest);
      expect(await dispatcher.collection('webhooks').countDocuments()).toBe(count);
    });
  });

  describe('"No response to a non-admin carries any fragment of any secret": the stored answer', () => {
    it('keeps no piece of the authorization or signing secret a target echoes back, in any case or cut', async () => {
      const token = material();
      const { webhook } = await webhookOnNewService(dispatcher, receiver.url, {
        authorization: `Bearer ${token}`,
      });
      const signing = webhook.secret.replace(/^whsec_/, '');
      const echoes = [
        `{"headers":{"authorization":"Bearer ${token}"}}`,
        `invalid token ${token.toUpperCase()}`,
        `token ${token.slice(0, 8)}... rejected; signed with ${signing.slice(3, 12)}`,
      ];
      const scan = new LeakScan().seed('the authorization', token).seed('the signing secret', signing);
      for (const body of echoes) {
        receiver.next({ status: 401, body });
        await fire(webhook.id, receiver);
      }
      const settled = await waitFor(async () => {
        const page = await dispatcher.as(owner, 'GET', path(webhook.id, 'responses/'));
        return page.body.results.length === echoes.length &&
          page.body.results.every((r: { state: string }) => r.state === 'FAILED')
          ? page
          : undefined;
      });
      expect(scan.scan('the responses', settled.text)).toEqual([]);
      expect(settled.body.results.map((r: { response_body: string }) => r.response_body)).toEqual([
        'token [redacted]... rejected; signed with [redacted]',
        'invalid token [redacted]',
        '{"headers":{"authorization":"Bearer [redacted]"}}',
      ]);
    });
  });

  describe('"Logs the same": no fragment of a secret in a log line', () => {
    it('logs no authorization or signing secret while webhooks are created, refused, moved, fired and rotated', async () => {
      const { webhook } = await webhookOnNewService(dispatcher, receiver.url, {
        authorization: `Bearer ${secrets.first}`,
      });
      leaks.seed('the signing secret', webhook.secret.replace(/^whsec_/, ''));
      const refused = await dispatcher.as(owner, 'PATCH', path(webhook.id), {
        target_url: elsewhere.url,
        authorization: `Bearer ${secrets.refused}\r\nX-Injected: yes`,
      });
      expect(refused.status).toBe(400);
      expect(
        (await dispatcher.as(owner, 'PATCH', path(webhook.id), { target_url: elsewhere.url })).status,
      ).toBe(400);
      const moved = await dispatcher.as(owner, 'PATCH', path(webhook.id), {
        target_url: elsewhere.url,
        authorization: `Bearer ${secrets.second}`,
      });
      expect(moved.status).toBe(200);
      expect((await fire(webhook.id, elsewhere)).headers.authorization).toBe(`Bearer ${secrets.second}`);
      const rotated = await dispatcher.as(owner, 'POST', path(webhook.id, 'rotate_secret/'));
      leaks.seed('the rotated signing secret', (rotated.body.secret as string).replace(/^whsec_/, ''));
      expect((await dispatcher.as(owner, 'POST', path(webhook.id, 'rotate_secret/'))).status).toBe(409);
      await fire(webhook.id, elsewhere);

      expect(leaks.report()).toEqual([]);
      expect(log.lines.length).toBeGreaterThan(10);
    });
  });
});
