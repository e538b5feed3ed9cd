import { isDeepStrictEqual } from 'node:util';
import type { AnyRoute } from '@pack/http-kit';
import type { RunningService } from '@pack/runtime';
import { ROLES, type Role } from '@pack/contracts';
import { call, LeakScan, Receiver, storedDocuments, waitFor, type CallResult } from '@pack/testkit';
import { seedMatrix } from '../route-matrix-seed';
import { startStack, type Stack } from '../stack';
import { ROUTE_ACCESS } from './route-access';

/**
 * Every route every service declares, called through the gateway as a user would: without a
 * token, with each role the route does not allow, with malformed bodies and with ids that are
 * not plain decimal numbers. Each answer must be the 4xx problem+json docs/reference/api.md promises, and
 * no database of the platform may change. The routes come from the running services
 * themselves, so a new route is covered the moment it is declared; who may call each is written
 * out in route-access.ts, so a route declared with other roles than those fails. Last, every route
 * is called as each role but admin, after the moves that could carry secrets out, and no
 * answer nor any log line of the stack may hold a fragment of a seeded secret.
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
  /** Every seeded secret; every answer to a non-admin and every log line of the stack is scanned. */
  const leaks = new LeakScan();
  let receiver: Receiver;
  /** A target that answers with the headers it got: where a stolen authorization would be read. */
  let echo: Receiver;

  beforeAll(async () => {
    receiver = await new Receiver().start();
    echo = await new Receiver({ echo: true }).start();
    stack = await startStack({ leaks });
    Object.assign(tokens, (await seedMatrix(stack, leaks, receiver.url)).tokens);
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
    await receiver?.stop();
    await echo?.stop();
  });

  const snapshot = () => Promise.all(stack.services.map((running) => storedDocuments(running)));

  type Calls = () => Promise<[what: string, answer: CallResult, statuses: number[], field?: string][]>;

  /** Runs the calls of one route and records what went wrong, so one run lists every bad route. */
  async function checkAnswers(failures: string[], label: string, calls: Calls) {
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
  }

  /**
   * Runs the calls of every route (label, calls) and records what went wrong; no database may
   * change. One snapshot of every database before all of them and one after (a snapshot around
   * each route made most of this file's time); only when they differ is each route called again
   * between snapshots of its own, so the failure names the route that stores.
   */
  async function check(failures: string[], routeCalls: [label: string, calls: Calls][]) {
    const before = await snapshot();
    for (const [label, calls] of routeCalls) await checkAnswers(failures, label, calls);
    if (isDeepStrictEqual(await snapshot(), before)) return;
    const named = failures.length;
    for (const [label, calls] of routeCalls) {
      const start = await snapshot();
      await calls();
      if (!isDeepStrictEqual(await snapshot(), start)) failures.push(`${label}: the database changed`);
    }
    if (failures.length === named)
      failures.push('the database changed during the calls, and no route changed it again when called alone');
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
    const routeCalls: [string, Calls][] = [];
    for (const { service, route, label } of routes.filter(({ route }) => route.access !== 'public')) {
      routeCalls.push([
        label,
        async () => {
          const method = route.method.toUpperCase();
          const answers: [string, CallResult, number[]][] = [
            ['through the gateway', await stack.call(method, pathOf(route), { token: null }), [401]],
          ];
          if (service.definition.name !== 'gateway')
            answers.push(['at the service', await call(service.url, method, pathOf(route)), [401]]);
          return answers;
        },
      ]);
    }
    await check(failures, routeCalls);
    expect(failures).toEqual([]);
  });

  it('declare exactly the roles written out in route-access.ts, route by route', () => {
    const declared = Object.fromEntries(routes.map(({ route, label }) => [label, route.access]));
    expect(declared).toEqual(ROUTE_ACCESS);
  });

  it('answer 403 problem+json to every role they do not allow', async () => {
    const failures: string[] = [];
    const routeCalls: [string, Calls][] = [];
    for (const { route, label } of routes) {
      const refused = ROLES.filter((role) => !allowed(label).includes(role));
      if (refused.length === 0) continue;
      routeCalls.push([
        label,
        async () => {
          const answers: [string, CallResult, number[]][] = [];
          for (const role of refused) {
            const answer = await stack.call(route.method.toUpperCase(), pathOf(route), {
              token: tokens[role],
              ...(route.body ? { body: {} } : {}),
            });
            answers.push([`as ${role}`, answer, [403]]);
          }
          return answers;
        },
      ]);
    }
    await check(failures, routeCalls);
    expect(failures).toEqual([]);
  });

  it('answer 400 problem+json naming the field to a malformed body, and to {} on PATCH', async () => {
    const failures: string[] = [];
    const routeCalls: [string, Calls][] = [];
    for (const { route, label } of routes.filter(({ route }) => route.body)) {
      const cases = [...BAD_BODIES];
      if (route.method === 'patch') cases.push(['an empty object', '{}', '(body)']);
      routeCalls.push([
        label,
        async () => {
          const answers: [string, CallResult, number[], string][] = [];
          for (const [what, raw, field] of cases) {
            const answer = await stack.call(route.method.toUpperCase(), pathOf(route), {
              token: tokens[caller(label)],
              raw,
            });
            answers.push([what, answer, [400], field]);
          }
          return answers;
        },
      ]);
    }
    await check(failures, routeCalls);
    expect(failures).toEqual([]);
  });

  it('answer 400 or 404 problem+json to ids that are not plain decimal numbers', async () => {
    const failures: string[] = [];
    const routeCalls: [string, Calls][] = [];
    for (const { route, label } of routes.filter(({ route }) => hasParams(route))) {
      routeCalls.push([
        label,
        async () => {
          const answers: [string, CallResult, number[]][] = [];
          for (const id of BAD_IDS) {
            const answer = await stack.call(route.method.toUpperCase(), pathOf(route, id), {
              token: tokens[caller(label)],
              ...(route.body ? { body: {} } : {}),
            });
            answers.push([`with id ${id}`, answer, [400, 404]]);
          }
          return answers;
        },
      ]);
    }
    await check(failures, routeCalls);
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

  // Last: these calls change what the others rely on (a rotation, a deletion).
  it('never answer a non-admin with a fragment of a seeded secret, and no log line of the stack holds one', async () => {
    const hook = '/v1/external/serviceowner/webhooks/1/';
    // A way out: the owner points the webhook at a target of theirs that answers with the
    // headers it got, fires it, and reads the stored answer. Refused now: nothing to read back.
    const moved = await stack.call('PATCH', hook, {
      token: tokens.service_owner,
      body: { target_url: echo.url },
    });
    expect(moved.status).toBe(400);
    expect(
      (await stack.call('POST', `${hook}trigger/`, { token: tokens.service_owner, body: {} })).status,
    ).toBe(202);
    await waitFor(
      async () => {
        const page = await stack.call('GET', `${hook}responses/`, { token: tokens.service_owner });
        leaks.scan("the fired webhook's responses as service_owner", page.text);
        return page.body.results?.some((r: { state: string }) => r.state === 'OK' || r.state === 'FAILED');
      },
      { what: 'the manual fire of webhook 1 to settle', intervalMs: 500 },
    );
    // Deletions near the end, and logout (which revokes the caller's token) last.
    const order = (route: AnyRoute) =>
      route.path.includes('logout') ? 2 : route.method === 'delete' ? 1 : 0;
    let calls = 0;
    const unauthorized: string[] = [];
    for (const { route, label } of [...routes].sort((a, b) => order(a.route) - order(b.route)))
      for (const role of ROLES.filter((r) => r !== 'admin')) {
        // Past the OpenAPI check of stack.call: fetch follows /v1/docs's redirect to the page.
        const answer = await call(stack.gateway, route.method.toUpperCase(), pathOf(route), {
          token: tokens[role],
          ...(route.body ? { body: {} } : {}),
        });
        leaks.scan(`${label} as ${role} (${answer.status})`, answer.text);
        calls += 1;
        if (answer.status === 401) unauthorized.push(`${label} as ${role}`);
      }
    expect(calls).toBe(routes.length * (ROLES.length - 1));
    leaks.rescanLogs();
    expect(unauthorized).toEqual([]);
    // The seven seeded on purpose, and those stack.call saw (tokens, the signing secret...).
    expect(leaks.secrets.size).toBeGreaterThanOrEqual(7);
    expect(leaks.report()).toEqual([]);
    // The services did log (at debug level) into the scan: a scan of nothing would pass as well.
    expect(leaks.lines).toBeGreaterThan(100);
  });
});
