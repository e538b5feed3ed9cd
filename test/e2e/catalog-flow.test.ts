import type { RunningService } from '@pack/runtime';
import { EventTap, metricValue, outboxDrained, waitFor } from '@pack/testkit';
import { startStack, type Stack } from '../stack';

/**
 * The catalog through the gateway, with real users and tokens: Services, submissions, the
 * Change Instance flow, owner scoping, live settings, and the events other services rely on.
 */
describe('catalog through the gateway', () => {
  let stack: Stack;
  let tokens: Record<'olivia' | 'oscar' | 'carla' | 'conrad', string>;
  let ids: Record<keyof typeof tokens, number>;
  let tap: EventTap;
  let catalog: RunningService<never>;
  let catalogUrl: string;

  const as = (who: keyof typeof tokens, method: string, path: string, body?: unknown) =>
    stack.call(method, path, { token: tokens[who], body });

  /** Every catalog event published so far: once the catalog's outbox is empty, nothing more comes. */
  const publishedEvents = async () => {
    await outboxDrained(catalog);
    return tap.drain();
  };

  beforeAll(async () => {
    stack = await startStack();
    catalog = stack.service('catalog');
    catalogUrl = catalog.url;
    const namespace = (catalog.context.config as { BROKER_NAMESPACE: string }).BROKER_NAMESPACE;
    tap = await EventTap.start(process.env.AMQP_URL!, namespace, ['catalog.change_instance.#']);

    const users = [
      ['olivia', 'service_owner'],
      ['oscar', 'service_owner'],
      ['carla', 'consumer'],
      ['conrad', 'consumer'],
    ] as const;
    tokens = {} as typeof tokens;
    ids = {} as typeof ids;
    for (const [username, role] of users) {
      const issued = await stack.call('POST', '/v1/core/tokens/', { body: { username, role } });
      expect(issued.status).toBe(201);
      tokens[username] = issued.body.token;
      ids[username] = issued.body.user.id;
    }
  });
  afterAll(async () => {
    await tap?.stop();
    await stack?.stop();
  });

  it('takes a declaration from submission to approval, as the consumer and the Service Owner see it', async () => {
    const service = await as('olivia', 'POST', '/v1/catalog/services/', {
      name: 'Database',
      description: 'PostgreSQL 16',
    });
    expect(service.status).toBe(201);
    expect(service.body.owner).toEqual({ id: ids.olivia, name: 'olivia' });

    const submitted = await as('carla', 'POST', `/v1/catalog/services/${service.body.id}/declarations/`, {
      declaration: { size: 'small', extensions: ['postgis'] },
    });
    expect(submitted.status).toBe(201);
    const instance = submitted.body.change_instance;
    expect(instance).toMatchObject({ state: 'PENDING', consumer: { id: ids.carla, name: 'carla' } });

    // The owner's default list (GUI Table Settings: PENDING) shows it waiting.
    const waiting = await as('olivia', 'GET', '/v1/catalog/change_instances/?limit=500');
    expect(waiting.body.results.map((ci: { id: number }) => ci.id)).toContain(instance.id);
    expect(new Set(waiting.body.results.map((ci: { state: string }) => ci.state))).toEqual(
      new Set(['PENDING']),
    );

    const approved = await as('olivia', 'PATCH', `/v1/catalog/change_instances/${instance.id}/`, {
      state: 'APPROVED',
    });
    expect(approved.status).toBe(200);
    const seen = await as('carla', 'GET', `/v1/catalog/change_instances/${instance.id}/`);
    expect(seen.body).toMatchObject({
      state: 'APPROVED',
      declaration: { size: 'small', extensions: ['postgis'] },
    });
    const latest = await as(
      'olivia',
      'GET',
      `/v1/catalog/service_items/${instance.service_item}/latest_approved_declaration/`,
    );
    expect(latest.body).toMatchObject({ change_instance: instance.id, declaration: { size: 'small' } });

    const events = (await publishedEvents()).filter((e) => e.data.change_instance_id === instance.id);
    expect(events.map((e) => `${e.type} ${e.data.state}`).sort()).toEqual([
      'catalog.change_instance.created.v1 PENDING',
      'catalog.change_instance.state_changed.v1 APPROVED',
    ]);
    for (const event of events) {
      expect(event.data.service).toEqual({
        id: service.body.id,
        name: 'Database',
        owner: { id: ids.olivia, name: 'olivia' },
      });
    }
  });

  it('approves at submission when the Service auto-approves', async () => {
    const service = await as('olivia', 'POST', '/v1/catalog/services/', { name: 'DNS', auto_approval: true });
    const submitted = await as('carla', 'POST', `/v1/catalog/services/${service.body.id}/declarations/`, {
      declaration: { host: 'www' },
    });
    expect(submitted.body.change_instance).toMatchObject({ state: 'APPROVED', auto_approved: true });
    expect(submitted.body.service_item.latest_approved_declaration_id).toBe(submitted.body.declaration.id);
    const events = (await publishedEvents()).filter(
      (e) => e.data.change_instance_id === submitted.body.change_instance.id,
    );
    expect(events.map((e) => e.type)).toEqual([
      'catalog.change_instance.created.v1',
      'catalog.change_instance.state_changed.v1',
    ]);
  });

  it('takes every legal transition once, refuses an illegal one with 409, and publishes one event per change', async () => {
    const service = await as('olivia', 'POST', '/v1/catalog/services/', { name: 'Cluster' });
    const walks = [
      ['APPROVED', 'IN_PROGRESS', 'FAILED', 'IN_PROGRESS', 'COMPLETED'],
      ['REJECTED'],
      ['CANCELLED'],
      ['APPROVED', 'CANCELLED'],
      ['APPROVED', 'IN_PROGRESS', 'CANCELLED'],
    ];
    const expected: string[] = [];
    const instances: number[] = [];
    for (const walk of walks) {
      const { body } = await as('carla', 'POST', `/v1/catalog/services/${service.body.id}/declarations/`, {
        declaration: { walk },
      });
      const id = body.change_instance.id as number;
      instances.push(id);
      expected.push(`${id} created PENDING`);
      let from = 'PENDING';
      for (const state of walk) {
        const moved = await as('olivia', 'PATCH', `/v1/catalog/change_instances/${id}/`, { state });
        expect(moved.status).toBe(200);
        expect(moved.body.state).toBe(state);
        expected.push(`${id} ${from} -> ${state}`);
        from = state;
      }
    }
    const illegal = await as('olivia', 'PATCH', `/v1/catalog/change_instances/${instances[0]}/`, {
      state: 'PENDING',
    });
    expect(illegal.status).toBe(409);
    expect(illegal.body.detail).toContain('from COMPLETED to PENDING');

    const events = (await publishedEvents()).filter((e) => instances.includes(e.data.change_instance_id));
    const published = events.map((e) =>
      e.type.endsWith('created.v1')
        ? `${e.data.change_instance_id} created ${e.data.state}`
        : `${e.data.change_instance_id} ${e.data.old_state} -> ${e.data.state}`,
    );
    expect(published.sort()).toEqual(expected.sort());
  });

  it("keeps each owner to their Services and each consumer to their own items: someone else's is 404", async () => {
    const service = await as('olivia', 'POST', '/v1/catalog/services/', { name: 'Private registry' });
    const { body } = await as('carla', 'POST', `/v1/catalog/services/${service.body.id}/declarations/`, {
      declaration: { r: 1 },
    });
    const instance = body.change_instance.id as number;

    expect((await as('oscar', 'GET', `/v1/catalog/services/${service.body.id}/`)).status).toBe(404);
    expect((await as('oscar', 'GET', `/v1/catalog/change_instances/${instance}/`)).status).toBe(404);
    expect(
      (await as('oscar', 'PATCH', `/v1/catalog/change_instances/${instance}/`, { state: 'APPROVED' })).status,
    ).toBe(404);
    expect((await as('oscar', 'GET', '/v1/catalog/change_instances/?state=ALL')).body.count).toBe(0);
    expect((await as('conrad', 'GET', `/v1/catalog/change_instances/${instance}/`)).status).toBe(404);
    expect((await as('conrad', 'GET', `/v1/catalog/service_items/${body.service_item.id}/`)).status).toBe(
      404,
    );
    expect((await as('conrad', 'GET', '/v1/catalog/service_items/')).body.count).toBe(0);
    expect(
      (await as('carla', 'PATCH', `/v1/catalog/change_instances/${instance}/`, { state: 'APPROVED' })).status,
    ).toBe(403);
    expect((await as('carla', 'GET', `/v1/catalog/change_instances/${instance}/`)).body.state).toBe(
      'PENDING',
    );
  });

  /** Follows a list's `next` links from `path` to the end: every page's ids and every link. */
  const walk = async (who: keyof typeof tokens | 'admin', path: string) => {
    const seen: number[] = [];
    const links: string[] = [];
    let next: string | null = path;
    while (next !== null && links.length < 100) {
      const page: Awaited<ReturnType<Stack['call']>> =
        who === 'admin' ? await stack.call('GET', next) : await as(who, 'GET', next);
      expect(page.status).toBe(200);
      seen.push(
        ...page.body.results.map((item: { id?: number; version?: number }) => item.id ?? item.version),
      );
      next = page.body.next;
      if (next !== null) links.push(next);
    }
    return { seen, links };
  };

  it('walks a list by its next links to the end: every record once, in order, while records are added (lists flat at any depth)', async () => {
    const service = await as('oscar', 'POST', '/v1/catalog/services/', { name: 'Paged by key' });
    const submit = async (n: number) =>
      (
        await as('conrad', 'POST', `/v1/catalog/services/${service.body.id}/declarations/`, {
          declaration: { n },
        })
      ).body.change_instance.id as number;
    const before: number[] = [];
    for (let n = 0; n < 7; n += 1) before.push(await submit(n));
    const listPath = `/v1/catalog/change_instances/?state=ALL&service=${service.body.id}&limit=2`;

    const first = await as('oscar', 'GET', listPath);
    expect(first.body.count).toBe(7);
    // two more arrive while the walk is under way: newer ones, listed before the walk's position
    const added = [await submit(7), await submit(8)];
    const rest = await walk('oscar', first.body.next);
    const seen = [...first.body.results.map((ci: { id: number }) => ci.id), ...rest.seen];
    expect(seen).toEqual([...before].reverse());
    expect(rest.links.every((link) => /[?&]after=\d+/.test(link) && !/[?&]offset=/.test(link))).toBe(true);
    expect(rest.links.every((link) => link.includes(`service=${service.body.id}`))).toBe(true);

    // a filtered list by key: only the approved ones, newest first, across pages of one
    for (const id of [before[1]!, before[4]!, added[0]!])
      await as('oscar', 'PATCH', `/v1/catalog/change_instances/${id}/`, { state: 'APPROVED' });
    const approved = await walk(
      'oscar',
      `/v1/catalog/change_instances/?state=APPROVED&service=${service.body.id}&limit=1`,
    );
    expect(approved.seen).toEqual([added[0], before[4], before[1]]);
    // the offset kept for compatibility: the page from an offset, its next link by key
    const byOffset = await as('oscar', 'GET', `${listPath}&offset=4`);
    expect(byOffset.body.results.map((ci: { id: number }) => ci.id)).toEqual([before[4], before[3]]);
    expect(byOffset.body.next).toMatch(new RegExp(`after=${before[3]}(&|$)`));
    // both: the offset counts from the key
    const both = await as('oscar', 'GET', `${listPath}&after=${before[6]}&offset=1`);
    expect(both.body.results.map((ci: { id: number }) => ci.id)).toEqual([before[4], before[3]]);
    expect(both.body.next).toMatch(new RegExp(`after=${before[3]}(&|$)`));
    expect(both.body.next).not.toContain('offset=');
  });

  it('pages every catalog and token list by key, the same records as one long page', async () => {
    for (const path of [
      '/v1/catalog/services/',
      '/v1/catalog/service_items/',
      '/v1/catalog/change_instances/?state=ALL',
      '/v1/catalog/service_owners/',
      '/v1/core/tokens/',
    ]) {
      const whole = await stack.call('GET', `${path}${path.includes('?') ? '&' : '?'}limit=500`);
      const ids = whole.body.results.map(
        (item: { id?: number; version?: number }) => item.id ?? item.version,
      );
      expect(ids.length).toBeGreaterThan(1);
      const paged = await walk('admin', `${path}${path.includes('?') ? '&' : '?'}limit=1`);
      expect({ path, seen: paged.seen }).toEqual({ path, seen: ids });
      expect(paged.links.length).toBe(ids.length - 1);
    }
  });

  it("refuses a bad after with 400 naming it, and someone else's key shows nothing of theirs", async () => {
    for (const after of [
      '+5',
      '-1',
      '05',
      '1.5',
      '1e3',
      'garbage',
      '__proto__',
      'constructor',
      '',
      '99999999999999999',
    ]) {
      const refused = await as(
        'oscar',
        'GET',
        `/v1/catalog/change_instances/?after=${encodeURIComponent(after)}`,
      );
      expect({ after, status: refused.status }).toEqual({ after, status: 400 });
      expect(refused.headers.get('content-type')).toContain('application/problem+json');
      expect(Object.keys(refused.body.errors)).toEqual(['query.after']);
    }

    const theirs = await as('olivia', 'POST', '/v1/catalog/services/', { name: 'Not for oscar' });
    const theirCi = (
      await as('carla', 'POST', `/v1/catalog/services/${theirs.body.id}/declarations/`, {
        declaration: { x: 1 },
      })
    ).body.change_instance.id as number;
    const own = await as('oscar', 'GET', '/v1/catalog/change_instances/?state=ALL&limit=500');
    const fromTheirKey = await as(
      'oscar',
      'GET',
      `/v1/catalog/change_instances/?state=ALL&after=${theirCi + 1}`,
    );
    expect(fromTheirKey.status).toBe(200);
    expect(fromTheirKey.body.count).toBe(own.body.count);
    expect(fromTheirKey.body.results.map((ci: { id: number }) => ci.id)).toEqual(
      own.body.results.map((ci: { id: number }) => ci.id).filter((id: number) => id < theirCi + 1),
    );
    expect(fromTheirKey.body.results.some((ci: { id: number }) => ci.id === theirCi)).toBe(false);
  });

  it('answers bad input as the issue asks, storing nothing', async () => {
    const before = (await stack.call('GET', '/v1/catalog/change_instances/?state=ALL')).body.count;
    expect(
      (await as('carla', 'POST', '/v1/catalog/services/424242/declarations/', { declaration: { a: 1 } }))
        .status,
    ).toBe(404);
    const service = (await as('olivia', 'POST', '/v1/catalog/services/', { name: 'Bad input target' })).body;
    const notObject = await as('carla', 'POST', `/v1/catalog/services/${service.id}/declarations/`, {
      declaration: [1, 2],
    });
    expect(notObject.status).toBe(400);
    expect(notObject.headers.get('content-type')).toContain('application/problem+json');
    expect((await stack.call('GET', '/v1/catalog/change_instances/?state=ALL')).body.count).toBe(before);
  });

  it('honours the Submission Builder and Service Creator settings an admin changes, without a restart', async () => {
    const applied = () => metricValue(catalogUrl, 'settings_applied_total');
    const change = async (patch: Record<string, unknown>) => {
      const before = await applied();
      expect((await stack.call('PATCH', '/v1/core/general_settings/', { body: patch })).status).toBe(200);
      await waitFor(async () => (await applied()) > before, { what: 'catalog applied the settings' });
    };
    const service = (await as('olivia', 'POST', '/v1/catalog/services/', { name: 'Settings target' })).body;

    await change({
      submission_builder: { enable_submit_functionality: false },
      service_creator: { allow_service_creation: false },
    });
    try {
      const refused = await as('carla', 'POST', `/v1/catalog/services/${service.id}/declarations/`, {
        declaration: { a: 1 },
      });
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toContain('submission_builder.enable_submit_functionality');
      expect(refused.body.detail).toMatch(/builder and the API/);
      expect((await as('oscar', 'POST', '/v1/catalog/services/', { name: 'Not now' })).status).toBe(403);
    } finally {
      // Switched back on, as the stack started: what follows shows both work again.
      await change({
        submission_builder: { enable_submit_functionality: true },
        service_creator: { allow_service_creation: true },
      });
    }
    expect(
      (
        await as('carla', 'POST', `/v1/catalog/services/${service.id}/declarations/`, {
          declaration: { a: 1 },
        })
      ).status,
    ).toBe(201);
    expect((await as('oscar', 'POST', '/v1/catalog/services/', { name: 'Now' })).status).toBe(201);
  });

  it('describes enable_submit_functionality in the API reference as what it does: off refuses every submission, the API included', async () => {
    const { status, body } = await stack.call('GET', '/v1/openapi.json', { token: null });
    expect(status).toBe(200);
    const descriptions: string[] = [];
    const visit = (node: unknown): void => {
      if (!node || typeof node !== 'object') return;
      const field = (node as Record<string, unknown>).enable_submit_functionality as
        { description?: string } | undefined;
      if (field && typeof field === 'object') descriptions.push(field.description ?? '');
      Object.values(node).forEach(visit);
    };
    visit(body);
    expect(descriptions.length).toBeGreaterThan(0);
    for (const description of descriptions) {
      expect(description).toMatch(/every submission/);
      expect(description).toMatch(/the API/);
    }
  });
});
