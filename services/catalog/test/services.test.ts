import { call } from '@pack/testkit';
import { admin, consumer, newUser, otherOwner, owner, startCatalog, type CatalogHarness } from './harness';

describe('catalog Services', () => {
  let catalog: CatalogHarness;
  beforeAll(async () => {
    catalog = await startCatalog();
  });
  afterAll(async () => {
    await catalog.stop();
  });

  it('lets a service owner create a Service they own, and shows it to them', async () => {
    const created = await catalog.as(owner, 'POST', '/v1/catalog/services/', {
      name: 'Postgres database',
      description: 'Managed PG',
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(Number),
      name: 'Postgres database',
      description: 'Managed PG',
      owner: { id: owner.id, name: owner.username },
      auto_approval: false,
      allow_submit_submission_builder: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const read = await catalog.as(owner, 'GET', `/v1/catalog/services/${created.body.id}/`);
    expect(read.body).toEqual(created.body);
  });

  it('lets an admin assign the owner, and the owner then sees and changes it', async () => {
    const created = await catalog.as(admin, 'POST', '/v1/catalog/services/', {
      name: 'Kafka topic',
      owner: { id: otherOwner.id, name: otherOwner.username },
      auto_approval: true,
    });
    expect(created.status).toBe(201);
    expect(created.body.owner).toEqual({ id: otherOwner.id, name: otherOwner.username });
    const patched = await catalog.as(otherOwner, 'PATCH', `/v1/catalog/services/${created.body.id}/`, {
      description: 'Topics',
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ description: 'Topics', auto_approval: true, name: 'Kafka topic' });
  });

  it('scopes lists and reads: owners see their own Services, consumers and admins all of them', async () => {
    const [first, second] = [newUser('service_owner'), newUser('service_owner')];
    const mine = (await catalog.as(first, 'POST', '/v1/catalog/services/', { name: `Bucket ${first.id}` }))
      .body;
    const theirs = (await catalog.as(second, 'POST', '/v1/catalog/services/', { name: `Topic ${second.id}` }))
      .body;

    const firstList = await catalog.as(first, 'GET', '/v1/catalog/services/');
    expect(firstList.status).toBe(200);
    expect(firstList.body).toMatchObject({ count: 1, next: null, previous: null });
    expect(firstList.body.results.map((s: { id: number }) => s.id)).toEqual([mine.id]);
    const secondList = await catalog.as(second, 'GET', '/v1/catalog/services/?limit=500');
    expect(secondList.body.results.map((s: { id: number }) => s.id)).toEqual([theirs.id]);

    for (const who of [consumer, admin]) {
      const all = await catalog.as(who, 'GET', '/v1/catalog/services/?limit=500');
      expect(all.body.results.map((s: { id: number }) => s.id)).toEqual(
        expect.arrayContaining([mine.id, theirs.id]),
      );
    }
    expect((await catalog.as(first, 'GET', `/v1/catalog/services/${theirs.id}/`)).status).toBe(404);
    expect((await catalog.as(consumer, 'GET', `/v1/catalog/services/${theirs.id}/`)).status).toBe(200);
  });

  it("answers 404 for another owner's Service on change or delete, and leaves it unchanged", async () => {
    const theirs = (
      await catalog.as(otherOwner, 'POST', '/v1/catalog/services/', { name: 'Not yours to change' })
    ).body;
    const patch = await catalog.as(owner, 'PATCH', `/v1/catalog/services/${theirs.id}/`, {
      name: 'Hijacked',
    });
    expect(patch.status).toBe(404);
    expect(patch.headers.get('content-type')).toContain('application/problem+json');
    expect((await catalog.as(owner, 'DELETE', `/v1/catalog/services/${theirs.id}/`)).status).toBe(404);
    expect((await catalog.as(admin, 'GET', `/v1/catalog/services/${theirs.id}/`)).body).toEqual(theirs);
  });

  it('refuses consumers writing Services (403), callers without a principal (401) and bad bodies (400), storing nothing', async () => {
    const before = (await catalog.as(admin, 'GET', '/v1/catalog/services/')).body.count as number;
    expect((await catalog.as(consumer, 'POST', '/v1/catalog/services/', { name: 'Nope' })).status).toBe(403);
    expect((await catalog.as(null, 'POST', '/v1/catalog/services/', { name: 'Nope' })).status).toBe(401);
    const bad = await catalog.as(owner, 'POST', '/v1/catalog/services/', {
      name: '',
      auto_approval: 'yes',
      colour: 'red',
    });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['auto_approval', 'colour', 'name']);
    const notJson = await call(catalog.url, 'POST', '/v1/catalog/services/', {
      principal: owner,
      raw: '{"name": ',
    });
    expect(notJson.status).toBe(400);
    expect((await catalog.as(admin, 'GET', '/v1/catalog/services/')).body.count).toBe(before);
  });

  it('refuses a service owner assigning another owner (403) and a duplicate name (409)', async () => {
    const assign = await catalog.as(owner, 'POST', '/v1/catalog/services/', {
      name: 'Redis',
      owner: { id: otherOwner.id, name: 'oscar' },
    });
    expect(assign.status).toBe(403);
    const mine = await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Memcached' });
    expect(mine.status).toBe(201);
    const duplicate = await catalog.as(otherOwner, 'POST', '/v1/catalog/services/', { name: 'Memcached' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.detail).toContain('name');
    expect(
      (
        await catalog.as(owner, 'PATCH', `/v1/catalog/services/${mine.body.id}/`, {
          owner: { id: otherOwner.id, name: 'oscar' },
        })
      ).status,
    ).toBe(403);
    expect((await catalog.as(owner, 'GET', `/v1/catalog/services/${mine.body.id}/`)).body).toEqual(mine.body);
  });

  it('deletes a Service without open change instances, and refuses one with a PENDING instance (409)', async () => {
    const busy = (await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Busy service' })).body;
    const submitted = await catalog.as(consumer, 'POST', `/v1/catalog/services/${busy.id}/declarations/`, {
      declaration: { size: 'S' },
    });
    expect(submitted.status).toBe(201);
    const refused = await catalog.as(owner, 'DELETE', `/v1/catalog/services/${busy.id}/`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('PENDING');

    await catalog.as(owner, 'PATCH', `/v1/catalog/change_instances/${submitted.body.change_instance.id}/`, {
      state: 'REJECTED',
    });
    expect((await catalog.as(owner, 'DELETE', `/v1/catalog/services/${busy.id}/`)).status).toBe(204);
    expect((await catalog.as(owner, 'GET', `/v1/catalog/services/${busy.id}/`)).status).toBe(404);
  });

  it('copies a renamed Service and a new owner onto its change instances', async () => {
    const service = (await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Queue' })).body;
    const submitted = await catalog.as(consumer, 'POST', `/v1/catalog/services/${service.id}/declarations/`, {
      declaration: { q: 1 },
    });
    const id = submitted.body.change_instance.id as number;
    await catalog.as(admin, 'PATCH', `/v1/catalog/services/${service.id}/`, {
      name: 'Message queue',
      owner: { id: otherOwner.id, name: 'oscar' },
    });
    const seen = await catalog.as(otherOwner, 'GET', `/v1/catalog/change_instances/${id}/`);
    expect(seen.status).toBe(200);
    expect(seen.body.service).toEqual({
      id: service.id,
      name: 'Message queue',
      owner: { id: otherOwner.id, name: 'oscar' },
    });
    expect((await catalog.as(owner, 'GET', `/v1/catalog/change_instances/${id}/`)).status).toBe(404);
  });
});

describe('Service Creator settings', () => {
  let catalog: CatalogHarness;
  beforeAll(async () => {
    catalog = await startCatalog();
  });
  afterAll(async () => {
    await catalog.stop();
  });

  it('stops service owners creating Services while allow_service_creation is off, but not admins', async () => {
    const creator = newUser('service_owner');
    await catalog.changeSettings((s) => {
      s.service_creator.allow_service_creation = false;
    });
    try {
      const refused = await catalog.as(creator, 'POST', '/v1/catalog/services/', { name: 'Blocked' });
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toContain('Service Creator');
      expect(
        (await catalog.as(creator, 'GET', `/v1/catalog/service_owners/${creator.id}/`)).body
          .can_create_services,
      ).toBe(false);
      expect((await catalog.as(admin, 'POST', '/v1/catalog/services/', { name: 'By admin' })).status).toBe(
        201,
      );
    } finally {
      await catalog.changeSettings((s) => {
        s.service_creator.allow_service_creation = true;
      });
    }
    const allowed = await catalog.as(creator, 'POST', '/v1/catalog/services/', { name: 'Blocked' });
    expect(allowed.status).toBe(201);
    const names = (await catalog.as(admin, 'GET', '/v1/catalog/services/?limit=500')).body.results.map(
      (service: { name: string }) => service.name,
    );
    expect(names).toEqual(expect.arrayContaining(['Blocked', 'By admin']));
  });

  it('gives new owners default_allow_service_creation, and an admin can allow one of them', async () => {
    const earlier = newUser('service_owner');
    const newcomer = newUser('service_owner');
    // An owner who created a Service while the default allowed it keeps the permission they got then.
    expect((await catalog.as(earlier, 'POST', '/v1/catalog/services/', { name: 'Early' })).status).toBe(201);
    await catalog.changeSettings((s) => {
      s.service_creator.default_allow_service_creation = false;
    });
    try {
      expect(
        (await catalog.as(earlier, 'POST', '/v1/catalog/services/', { name: 'Still allowed' })).status,
      ).toBe(201);

      const view = await catalog.as(newcomer, 'GET', `/v1/catalog/service_owners/${newcomer.id}/`);
      expect(view.body).toMatchObject({
        id: newcomer.id,
        allow_service_creation: false,
        can_create_services: false,
        created_at: null,
      });
      const refused = await catalog.as(newcomer, 'POST', '/v1/catalog/services/', {
        name: 'Newcomer service',
      });
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toContain('administrator can allow');

      const allowed = await catalog.as(admin, 'PUT', `/v1/catalog/service_owners/${newcomer.id}/`, {
        username: newcomer.username,
        allow_service_creation: true,
      });
      expect(allowed.body).toMatchObject({
        id: newcomer.id,
        allow_service_creation: true,
        can_create_services: true,
      });
      expect(
        (await catalog.as(newcomer, 'POST', '/v1/catalog/services/', { name: 'Newcomer service' })).status,
      ).toBe(201);

      const list = await catalog.as(admin, 'GET', '/v1/catalog/service_owners/?limit=500');
      expect(
        list.body.results
          .filter((o: { id: number }) => o.id === earlier.id || o.id === newcomer.id)
          .map((o: { id: number; allow_service_creation: boolean }) => [o.id, o.allow_service_creation]),
      ).toEqual([
        [earlier.id, true],
        [newcomer.id, true],
      ]);
      expect((await catalog.as(earlier, 'GET', `/v1/catalog/service_owners/${newcomer.id}/`)).status).toBe(
        404,
      );
      expect(
        (
          await catalog.as(earlier, 'PUT', `/v1/catalog/service_owners/${earlier.id}/`, {
            username: 'x',
            allow_service_creation: true,
          })
        ).status,
      ).toBe(403);
    } finally {
      await catalog.changeSettings((s) => {
        s.service_creator.default_allow_service_creation = true;
      });
    }
  });
});
