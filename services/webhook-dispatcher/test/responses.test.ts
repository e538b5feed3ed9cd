import type { Principal } from '@pack/contracts';
import { waitFor } from '@pack/testkit';
import {
  admin,
  Receiver,
  startDispatcher,
  WEBHOOKS,
  webhookOnNewService,
  type DispatcherHarness,
} from './harness';

const RESPONSES = '/v1/external/serviceowner/webhook_responses/';

interface View {
  id: number;
  webhook: number;
  state: string;
  message_id: string;
}

describe('Webhook Responses across webhooks (/webhook_responses/)', () => {
  let dispatcher: DispatcherHarness;
  let ok: Receiver;
  let refusing: Receiver;
  let nextOwner = 500;

  beforeAll(async () => {
    dispatcher = await startDispatcher();
    // The tests poll responses while fires settle; the limit itself is tested last, on its own.
    await dispatcher.changeSettings((s) => {
      s.external_api.webhook_response_rate_limit = 100_000;
    });
    ok = await new Receiver().start();
    refusing = await new Receiver().start();
    refusing.fallback = { status: 400, body: 'no' };
  });
  afterAll(async () => {
    await ok.stop();
    await refusing.stop();
    await dispatcher.stop();
  });

  /** An owner of their own, so no other test's responses are theirs. */
  const newOwner = (): Principal => {
    nextOwner += 1;
    return { id: nextOwner, username: `owner${nextOwner}`, role: 'service_owner' };
  };
  const webhookOf = async (by: Principal, target: string) =>
    (await webhookOnNewService(dispatcher, target, {}, by)).webhook.id;
  /** A manual fire, settled (OK or FAILED) before the next one starts, so creation times differ. */
  const fire = async (by: Principal, webhook: number) => {
    expect((await dispatcher.as(by, 'POST', `${WEBHOOKS}${webhook}/trigger/`, {})).status).toBe(202);
    await waitFor(
      async () => {
        const page = (await dispatcher.as(by, 'GET', `${WEBHOOKS}${webhook}/responses/`)).body as {
          results: View[];
        };
        return page.results.every((r) => r.state === 'OK' || r.state === 'FAILED');
      },
      { what: `webhook ${webhook} settled` },
    );
  };
  const list = async (by: Principal, query = '') => dispatcher.as(by, 'GET', `${RESPONSES}${query}`);
  const pairs = (body: unknown) =>
    (body as { results: View[] }).results.map((r) => [r.webhook, r.id, r.state]);

  it("lists the caller's responses of all their webhooks, newest first, filtered and paged", async () => {
    const owner = newOwner();
    const stranger = newOwner();
    const first = await webhookOf(owner, ok.url);
    const second = await webhookOf(owner, refusing.url);
    const theirs = await webhookOf(stranger, ok.url);
    await fire(owner, first);
    await fire(owner, second);
    await fire(stranger, theirs);
    await fire(owner, first);

    const all = await list(owner);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ count: 3, next: null, previous: null });
    expect(pairs(all.body)).toEqual([
      [first, 2, 'OK'],
      [second, 1, 'FAILED'],
      [first, 1, 'OK'],
    ]);
    expect(pairs((await list(stranger)).body)).toEqual([[theirs, 1, 'OK']]);

    expect(pairs((await list(owner, `?webhook=${first}`)).body)).toEqual([
      [first, 2, 'OK'],
      [first, 1, 'OK'],
    ]);
    expect(pairs((await list(owner, '?state=FAILED')).body)).toEqual([[second, 1, 'FAILED']]);
    expect(pairs((await list(owner, `?webhook=${second}&state=OK`)).body)).toEqual([]);

    const page = await list(owner, '?state=OK&limit=1');
    expect(page.body).toMatchObject({ count: 2 });
    expect(pairs(page.body)).toEqual([[first, 2, 'OK']]);
    const next = (page.body as { next: string }).next;
    expect(next).toContain('state=OK');
    expect(pairs((await list(owner, next.slice(RESPONSES.length))).body)).toEqual([[first, 1, 'OK']]);

    // An admin sees everyone's.
    const everyone = pairs((await list(admin, '?limit=500')).body);
    expect(everyone).toEqual(
      expect.arrayContaining([
        [theirs, 1, 'OK'],
        [second, 1, 'FAILED'],
      ]),
    );
  });

  it("reads one response by its message id, only within the caller's webhooks", async () => {
    const owner = newOwner();
    const stranger = newOwner();
    const webhook = await webhookOf(owner, ok.url);
    await fire(owner, webhook);
    const [listed] = (await list(owner)).body.results as View[];
    const path = `${RESPONSES}${listed!.message_id}/`;

    const read = await dispatcher.as(owner, 'GET', path);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ webhook, id: 1, state: 'OK', message_id: listed!.message_id });
    expect(ok.requests.some((r) => r.headers['webhook-id'] === listed!.message_id)).toBe(true);
    expect((await dispatcher.as(admin, 'GET', path)).status).toBe(200);
    expect((await dispatcher.as(stranger, 'GET', path)).status).toBe(404);
    expect((await dispatcher.as(owner, 'GET', `${RESPONSES}msg_0_none/`)).status).toBe(404);
  });

  it("answers 400 naming the field on bad filters, and 404 for another owner's webhook", async () => {
    const owner = newOwner();
    const theirs = await webhookOf(newOwner(), ok.url);
    const badState = await list(owner, '?state=DONE');
    expect(badState.status).toBe(400);
    expect(badState.body).toMatchObject({ errors: { 'query.state': expect.any(Array) } });
    const badWebhook = await list(owner, '?webhook=abc');
    expect(badWebhook.status).toBe(400);
    expect(badWebhook.body).toMatchObject({ errors: { 'query.webhook': expect.any(Array) } });
    expect((await dispatcher.as(owner, 'GET', `${RESPONSES}not-a-message/`)).status).toBe(400);
    expect((await list(owner, `?webhook=${theirs}`)).status).toBe(404);
  });

  it('counts its reads against webhook_response_rate_limit: 429 with Retry-After beyond', async () => {
    const reader = newOwner();
    await dispatcher.changeSettings((s) => {
      s.external_api.webhook_response_rate_limit = 3;
    });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await list(reader)).status);
      expect(statuses).toEqual([200, 200, 200]);
      const limited = await dispatcher.as(reader, 'GET', `${RESPONSES}msg_1_x/`);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('content-type')).toContain('application/problem+json');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      await dispatcher.changeSettings((s) => {
        s.external_api.webhook_response_rate_limit = 100_000;
      });
    }
  });
});
