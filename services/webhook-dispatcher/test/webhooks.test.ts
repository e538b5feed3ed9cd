import { seededSecret, waitFor } from '@pack/testkit';
import {
  admin,
  otherOwner,
  owner,
  consumer,
  startDispatcher,
  WEBHOOKS,
  type DispatcherHarness,
} from './harness';

const full = (service: number) => ({
  name: 'Playbook',
  description: 'Runs the namespace playbook',
  service,
  target_url: 'http://127.0.0.1:9/hook',
  authorization: `Bearer PLAINTEXT-token-${seededSecret('the webhook authorization', { suffix: '1234' })}`,
  change_instance_state: 'APPROVED',
  trigger_wait_time: 5,
  trigger_cooling_time: 30,
});

describe('webhooks: create, read, change, delete (endpoint 8)', () => {
  let dispatcher: DispatcherHarness;
  beforeAll(async () => {
    dispatcher = await startDispatcher();
    await dispatcher.addService(100, owner);
    await dispatcher.addService(200, otherOwner);
  });
  afterAll(() => dispatcher.stop());

  const stored = async () => ({
    webhooks: await dispatcher.collection('webhooks').find({}).sort({ _id: 1 }).toArray(),
    schedules: await dispatcher.collection('webhook_schedules').countDocuments(),
  });

  it('creates from the full form, shows the signing secret once and masks the authorization', async () => {
    const created = await dispatcher.as(owner, 'POST', WEBHOOKS, full(100));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'Playbook',
      service: 100,
      owner: { id: owner.id, name: owner.username },
      target_url: 'http://127.0.0.1:9/hook',
      authorization: '********1234',
      change_instance_state: 'APPROVED',
      trigger_wait_time: 5,
      trigger_cooling_time: 30,
      enabled: true,
    });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);

    const read = await dispatcher.as(owner, 'GET', `${WEBHOOKS}${created.body.id}/`);
    expect(read.body.secret).not.toBe(created.body.secret);
    expect(read.body.secret).toBe(`********${created.body.secret.slice(-4)}`);
    expect(read.body.authorization).toBe('********1234');

    const raw = JSON.stringify(await dispatcher.collection('webhooks').findOne({ _id: created.body.id }));
    expect(raw).not.toContain('PLAINTEXT');
    expect(raw).not.toContain(created.body.secret.slice(6));
  });

  it('creates from the short form with null state and zero times', async () => {
    const created = await dispatcher.as(owner, 'POST', WEBHOOKS, {
      name: 'Short',
      description: 'short form',
      service: 100,
      target_url: 'https://example.com/hook',
      authorization: 'Token abc',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      change_instance_state: null,
      trigger_wait_time: 0,
      trigger_cooling_time: 0,
    });
  });

  it('rotates the secret: the new one shown once, the old one gone', async () => {
    const created = (await dispatcher.as(owner, 'POST', WEBHOOKS, full(100))).body;
    const rotated = await dispatcher.as(owner, 'POST', `${WEBHOOKS}${created.id}/rotate_secret/`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.secret);
    const read = await dispatcher.as(owner, 'GET', `${WEBHOOKS}${created.id}/`);
    expect(read.body.secret).toBe(`********${rotated.body.secret.slice(-4)}`);
  });

  it('keeps the stored authorization when the mask is sent back, replaces it otherwise', async () => {
    const created = (await dispatcher.as(owner, 'POST', WEBHOOKS, full(100))).body;
    const kept = await dispatcher.as(owner, 'PATCH', `${WEBHOOKS}${created.id}/`, {
      authorization: created.authorization,
      name: 'Renamed',
    });
    expect(kept.body).toMatchObject({ name: 'Renamed', authorization: '********1234' });
    const replaced = await dispatcher.as(owner, 'PATCH', `${WEBHOOKS}${created.id}/`, {
      authorization: `Bearer another-secret-${seededSecret('a replaced authorization', { suffix: '9876' })}`,
    });
    expect(replaced.body.authorization).toBe('********9876');
  });

  it('scopes by owner: another owner sees nothing and gets 404, an admin sees all', async () => {
    const mine = (await dispatcher.as(owner, 'POST', WEBHOOKS, full(100))).body;
    const theirs = (await dispatcher.as(otherOwner, 'POST', WEBHOOKS, full(200))).body;
    const listed = await dispatcher.as(otherOwner, 'GET', WEBHOOKS);
    expect(listed.body.results.map((w: { id: number }) => w.id)).toEqual([theirs.id]);
    for (const [method, path] of [
      ['GET', `${WEBHOOKS}${mine.id}/`],
      ['PATCH', `${WEBHOOKS}${mine.id}/`],
      ['DELETE', `${WEBHOOKS}${mine.id}/`],
      ['POST', `${WEBHOOKS}${mine.id}/trigger/`],
      ['GET', `${WEBHOOKS}${mine.id}/responses/`],
    ] as const) {
      const body = method === 'PATCH' ? { name: 'mine now' } : method === 'POST' ? {} : undefined;
      expect([method, path, (await dispatcher.as(otherOwner, method, path, body)).status]).toEqual([
        method,
        path,
        404,
      ]);
    }
    const all = await dispatcher.as(admin, 'GET', `${WEBHOOKS}?limit=500`);
    expect(all.body.results.map((w: { id: number }) => w.id)).toEqual(
      expect.arrayContaining([mine.id, theirs.id]),
    );
    expect((await dispatcher.as(consumer, 'GET', WEBHOOKS)).status).toBe(403);
    expect((await dispatcher.as(null, 'GET', WEBHOOKS)).status).toBe(401);
  });

  it("answers a webhook on another owner's Service as on a missing one (400 naming service), storing nothing", async () => {
    const before = await stored();
    const reply = await dispatcher.as(owner, 'POST', WEBHOOKS, full(200));
    expect(reply.status).toBe(400);
    expect(reply.body.errors).toEqual({ service: ['no Service with id 200 that you own'] });
    expect(await stored()).toEqual(before);
  });

  it.each([
    ['target_url', { target_url: 'not a url' }],
    ['target_url', { target_url: 'ftp://example.com/x' }],
    ['trigger_wait_time', { trigger_wait_time: -1 }],
    ['trigger_wait_time', { trigger_wait_time: 86_401 }],
    ['trigger_cooling_time', { trigger_cooling_time: 1e9 }],
    ['change_instance_state', { change_instance_state: 'SOMEWHERE' }],
    ['service', { service: 999 }],
  ])('answers 400 naming %s and stores nothing', async (field, change) => {
    const before = await stored();
    const reply = await dispatcher.as(owner, 'POST', WEBHOOKS, { ...full(100), ...change });
    expect(reply.status).toBe(400);
    expect(reply.headers.get('content-type')).toContain('application/problem+json');
    expect(Object.keys(reply.body.errors)).toContain(field);
    expect(await stored()).toEqual(before);
  });

  it('follows the Service to its new owner', async () => {
    await dispatcher.addService(300, owner);
    const created = (await dispatcher.as(owner, 'POST', WEBHOOKS, full(300))).body;
    await dispatcher.addService(300, otherOwner);
    const moved = await waitFor(async () => {
      const reply = await dispatcher.as(otherOwner, 'GET', `${WEBHOOKS}${created.id}/`);
      return reply.status === 200 ? reply : undefined;
    });
    expect(moved.body.owner).toEqual({ id: otherOwner.id, name: otherOwner.username });
    expect((await dispatcher.as(owner, 'GET', `${WEBHOOKS}${created.id}/`)).status).toBe(404);
  });

  it('deletes a webhook', async () => {
    const created = (await dispatcher.as(owner, 'POST', WEBHOOKS, full(100))).body;
    expect((await dispatcher.as(owner, 'DELETE', `${WEBHOOKS}${created.id}/`)).status).toBe(204);
    expect((await dispatcher.as(owner, 'GET', `${WEBHOOKS}${created.id}/`)).status).toBe(404);
  });
});

describe('webhook targets the address guard refuses (no PACK_ALLOWED_TARGET_CIDRS)', () => {
  let dispatcher: DispatcherHarness;
  beforeAll(async () => {
    dispatcher = await startDispatcher({ env: { PACK_ALLOWED_TARGET_CIDRS: '' } });
    await dispatcher.addService(100, owner);
  });
  afterAll(() => dispatcher.stop());

  it.each([
    'http://127.0.0.1:8080/hook',
    'http://10.0.0.5/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::1]/hook',
    'http://localhost:8080/hook',
  ])('refuses %s at creation with a 400 naming target_url', async (target_url) => {
    const reply = await dispatcher.as(owner, 'POST', WEBHOOKS, { ...full(100), target_url });
    expect(reply.status).toBe(400);
    expect(Object.keys(reply.body.errors)).toEqual(['target_url']);
    expect(await dispatcher.collection('webhooks').countDocuments()).toBe(0);
  });
});
