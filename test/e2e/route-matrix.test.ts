import { isDeepStrictEqual } from 'node:util';
import type { AnyRoute } from '@pack/http-kit';
import type { RunningService } from '@pack/runtime';
import { ROLES, type Role } from '@pack/contracts';
import { call, outboxDrained, storedDocuments, waitFor, type CallResult } from '@pack/testkit';
import { modelKnownToOrchestrator, startStack, type Stack } from '../stack';
import { ROUTE_ACCESS } from './route-access';

/**
 * Every route every service declares, called through the gateway as a user would: without a
 * token, with each role the route does not allow, with malformed bodies and with ids that are
 * not plain decimal numbers. Each answer must be the 4xx problem+json the README promises, and
 * no database of the platform may change. The routes come from the running services
 * themselves, so a new route is covered the moment it is declared; who may call each is written
 * out in route-access.ts, so a route declared with other roles than those fails.
 */

interface Declared {
  service: RunningService<never>;
  route: AnyRoute;
  label: string;
}

/** The seeded resources all have id 1, so an id misread as 1 would reach a real resource. */
const SEEDED_ID = '1';
const BAD_IDS = ['+1', '01', '0x1', '1.0', '1e0', '%201', '1%20', '-1', '0', '9007199254740993', '%E0%A4%A'];
const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
const BAD_BODIES: [what: string, raw: string | Uint8Array, field: string][] = [
  ['a body of the wrong type', '42', '(body)'],
  ['a top-level __proto__ key', '{"__proto__":{"role":"admin"}}', '__proto__'],
  ['a nested constructor key', '{"a":{"b":[{"constructor":{}}]}}', 'a.b.0.constructor'],
  ['a prototype key', '{"prototype":{"x":1}}', 'prototype'],
  ['JSON nested 5000 levels deep', `{"a":${nested(5000)}}`, 'a'],
  [
    'invalid UTF-8',
    Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]),
    '(body)',
  ],
];

const pathOf = (route: AnyRoute, id = SEEDED_ID) => route.path.replace(/:\w+/g, id);
const hasParams = (route: AnyRoute) => /:\w+/.test(route.path);
/** The roles that may call a route, from the table written out in route-access.ts (not the route's own declaration). */
const allowed = (label: string): readonly Role[] => {
  const access = ROUTE_ACCESS[label];
  if (access === undefined) throw new Error(`${label} is not in route-access.ts`);
  return access === 'public' || access === 'authenticated' ? ROLES : access;
};
/** The caller for checks past authorization: an admin where the route allows one. */
const caller = (label: string): Role => (allowed(label).includes('admin') ? 'admin' : allowed(label)[0]!);

describe('every declared route', () => {
  let stack: Stack;
  const tokens = {} as Record<Role, string>;
  let routes: Declared[];

  beforeAll(async () => {
    stack = await startStack();
    tokens.admin = stack.adminToken;
    for (const role of ROLES.filter((r) => r !== 'admin')) {
      const issued = await stack.call('POST', '/v1/core/tokens/', {
        body: { username: `matrix_${role}`, role },
      });
      expect(issued.status).toBe(201);
      tokens[role] = issued.body.token;
    }
    // Id 1 of every kind exists: a token, a Service, its Service Item, declaration and change instance,
    // an LLM model, an AI processor.
    const service = await stack.call('POST', '/v1/catalog/services/', {
      token: tokens.service_owner,
      body: { name: 'Matrix service' },
    });
    expect(service.body.id).toBe(1);
    const submitted = await stack.call('POST', '/v1/catalog/services/1/declarations/', {
      token: tokens.consumer,
      body: { declaration: { size: 'S' } },
    });
    expect(submitted.body.change_instance.id).toBe(1);
    const model = await stack.call('POST', '/v1/ai/llm_models/', {
      body: {
        name: 'Matrix model',
        provider: 'vendor1',
        model_name: 'm',
        extra_data: { api_key: 'matrix-key-0000', base_url: 'https://llm.example.com/v1' },
      },
    });
    expect(model.body.id).toBe(1);
    await modelKnownToOrchestrator(stack, model.body.id);
    // The orchestrator learns the Service and the model from events; until then it answers 400.
    const processor = await waitFor(
      async () => {
        const created = await stack.call('POST', '/v1/ai/processors/', {
          token: tokens.service_owner,
          body: { name: 'Matrix processor', service: 1, kind: 'config', llm_model: 1, active: true },
        });
        return created.status === 201 && created;
      },
      { what: 'the orchestrator to know Service 1 and model 1' },
    );
    expect(processor.body.id).toBe(1);
    for (const running of stack.services)
      if (running.definition.usesBroker !== false) await outboxDrained(running);
    routes = stack.services.flatMap((running) =>
      running.routes.map((route) => ({
        service: running,
        route,
        label: `${running.definition.name} ${route.method.toUpperCase()} ${route.path}`,
      })),
    );
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const snapshot = () => Promise.all(stack.services.map((running) => storedDocuments(running)));

  /** Runs the calls of one route and records what went wrong, so one run lists every bad route. */
  async function check(
    failures: string[],
    label: string,
    calls: () => Promise<[what: string, answer: CallResult, statuses: number[], field?: string][]>,
  ) {
    const before = await snapshot();
    for (const [what, answer, statuses, field] of await calls()) {
      const at = `${label} ${what}`;
      if (!statuses.includes(answer.status))
        failures.push(
          `${at}: ${answer.status} instead of ${statuses.join(' or ')}: ${answer.text.slice(0, 200)}`,
        );
      else if (!answer.headers.get('content-type')?.startsWith('application/problem+json'))
        failures.push(`${at}: answered ${answer.headers.get('content-type')}, not problem+json`);
      else if (field !== undefined && !isDeepStrictEqual(Object.keys(answer.body.errors ?? {}), [field]))
        failures.push(`${at}: errors name ${JSON.stringify(answer.body.errors)}, not ${field}`);
    }
    if (!isDeepStrictEqual(await snapshot(), before)) failures.push(`${label}: the database changed`);
  }

  it('are found on every service: the gateway, settings, catalog, llm-gateway, pipeline-orchestrator and webhook-dispatcher', () => {
    const services = new Set(routes.map(({ service }) => service.definition.name));
    expect([...services].sort()).toEqual([
      'catalog',
      'gateway',
      'llm-gateway',
      'pipeline-orchestrator',
      'settings',
      'webhook-dispatcher',
    ]);
    expect(routes.length).toBeGreaterThanOrEqual(20);
  });

  it('answer 401 problem+json without a token, at the gateway and at the service itself', async () => {
    const failures: string[] = [];
    for (const { service, route, label } of routes.filter(({ route }) => route.access !== 'public')) {
      await check(failures, label, async () => {
        const method = route.method.toUpperCase();
        const answers: [string, CallResult, number[]][] = [
          ['through the gateway', await stack.call(method, pathOf(route), { token: null }), [401]],
        ];
        if (service.definition.name !== 'gateway')
          answers.push(['at the service', await call(service.url, method, pathOf(route)), [401]]);
        return answers;
      });
    }
    expect(failures).toEqual([]);
  });

  it('declare exactly the roles written out in route-access.ts, route by route', () => {
    const declared = Object.fromEntries(routes.map(({ route, label }) => [label, route.access]));
    expect(declared).toEqual(ROUTE_ACCESS);
  });

  it('answer 403 problem+json to every role they do not allow', async () => {
    const failures: string[] = [];
    for (const { route, label } of routes) {
      const refused = ROLES.filter((role) => !allowed(label).includes(role));
      if (refused.length === 0) continue;
      await check(failures, label, async () => {
        const answers: [string, CallResult, number[]][] = [];
        for (const role of refused) {
          const answer = await stack.call(route.method.toUpperCase(), pathOf(route), {
            token: tokens[role],
            ...(route.body ? { body: {} } : {}),
          });
          answers.push([`as ${role}`, answer, [403]]);
        }
        return answers;
      });
    }
    expect(failures).toEqual([]);
  });

  it('answer 400 problem+json naming the field to a malformed body, and to {} on PATCH', async () => {
    const failures: string[] = [];
    for (const { route, label } of routes.filter(({ route }) => route.body)) {
      const cases = [...BAD_BODIES];
      if (route.method === 'patch') cases.push(['an empty object', '{}', '(body)']);
      await check(failures, label, async () => {
        const answers: [string, CallResult, number[], string][] = [];
        for (const [what, raw, field] of cases) {
          const answer = await stack.call(route.method.toUpperCase(), pathOf(route), {
            token: tokens[caller(label)],
            raw,
          });
          answers.push([what, answer, [400], field]);
        }
        return answers;
      });
    }
    expect(failures).toEqual([]);
  });

  it('answer 400 or 404 problem+json to ids that are not plain decimal numbers', async () => {
    const failures: string[] = [];
    for (const { route, label } of routes.filter(({ route }) => hasParams(route))) {
      await check(failures, label, async () => {
        const answers: [string, CallResult, number[]][] = [];
        for (const id of BAD_IDS) {
          const answer = await stack.call(route.method.toUpperCase(), pathOf(route, id), {
            token: tokens[caller(label)],
            ...(route.body ? { body: {} } : {}),
          });
          answers.push([`with id ${id}`, answer, [400, 404]]);
        }
        return answers;
      });
    }
    expect(failures).toEqual([]);
  });

  it('answer an over-long request line with 431 problem+json, at the gateway and at each service', async () => {
    for (const running of stack.services) {
      const answer = await call(running.url, 'GET', `/v1/catalog/services/?q=${'x'.repeat(20_000)}`);
      expect(answer.status).toBe(431);
      expect(answer.headers.get('content-type')).toContain('application/problem+json');
      expect(answer.body).toMatchObject({ status: 431 });
    }
  });
});
