import { randomBytes } from 'node:crypto';
import type { Role } from '@pack/contracts';
import type { RunningService } from '@pack/runtime';
import {
  answersReady,
  budgetsSettled,
  call,
  changedDocuments,
  type CallOptions,
  type CallResult,
  CEILINGS,
  flushSpans,
  LeakScan,
  type OtlpReceiver,
  outboxDrained,
  pendingEvents,
  queueDepths,
  stackCollector,
  startHarness,
  storedCollection,
  storedDocuments,
  sweepsSettled,
  testEnv,
  uniqueName,
  waitFor,
} from '@pack/testkit';
import {
  catalogKind,
  gatewayKind,
  llmGatewayKind,
  orchestratorKind,
  settingsKind,
  webhookDispatcherKind,
  type PlainHarness,
  type PlainKind,
} from './kinds';
import { OpenApiCheck } from './openapi-check';

/** Every service of the platform in this process, with the gateway in front, as a user meets it. */
export interface Stack {
  gateway: string;
  /** The broker namespace every service of the stack shares. */
  namespace: string;
  adminToken: string;
  /** The broker namespace every service of the stack shares (prefix of its queue names). */
  brokerNamespace: string;
  services: RunningService<never>[];
  /** The variables each service behind the gateway was started with, by name (to start another replica). */
  envs: Record<string, Env>;
  /** Base URL of each service behind the gateway, by name (to reach one past the gateway). */
  urls: Record<string, string>;
  /** A running service by its name (gateway, settings, catalog, llm-gateway, pipeline-orchestrator, webhook-dispatcher). */
  service(name: string): RunningService<never>;
  /**
   * Calls the public API with a token (the admin's unless another is given). Every answer is
   * checked against the published OpenAPI document: an undocumented status or a body that does
   * not match its schema fails the test.
   */
  call(method: string, path: string, options?: Omit<CallOptions, 'principal'>): Promise<CallResult>;
  /** A token of a new user with `role`, issued by the admin. */
  issueToken(role: Role): Promise<string>;
  /** The checker built from the gateway's /v1/openapi.json (fetched once). */
  openApi(): Promise<OpenApiCheck>;
  /**
   * Every log line of every service (at debug level) is scanned for the secrets seeded here: the
   * value of each secret-named field of every body stack.call sends or receives is seeded
   * (LeakScan.seedFrom), and a test may seed more. stop() fails when a line, or a span the stack
   * exported, held a fragment of one.
   */
  leaks: LeakScan;
  /** The OTLP receiver every service of the stack exports its spans to (one per test file). */
  traces: OtlpReceiver;
  stop(): Promise<void>;
}

/**
 * The services behind the gateway, each started by the test kit's harness (on the stack's shared
 * broker namespace, so events flow between them). `env` is the gateway variable that points at
 * the service; `needs` are the URLs of the others it calls (its config's), so it starts once
 * those listen, beside the others that wait for the same.
 */
const BEHIND_GATEWAY = [
  { kind: settingsKind, env: 'SETTINGS_URL', needs: [] },
  { kind: catalogKind, env: 'CATALOG_URL', needs: ['SETTINGS_URL'] },
  { kind: llmGatewayKind, env: 'LLM_GATEWAY_URL', needs: ['SETTINGS_URL'] },
  {
    kind: orchestratorKind,
    env: 'PIPELINE_ORCHESTRATOR_URL',
    needs: ['SETTINGS_URL', 'CATALOG_URL', 'LLM_GATEWAY_URL'],
  },
  { kind: webhookDispatcherKind, env: 'WEBHOOK_DISPATCHER_URL', needs: ['SETTINGS_URL', 'CATALOG_URL'] },
] as const;

type Env = Record<string, string>;

/** Fake providers and webhook receivers listen on loopback, which the URL guards refuse by default. */
const LOOPBACK_TARGETS = '127.0.0.0/8,::1/128';

export interface StackOptions {
  /** PACK_ALLOWED_TARGET_CIDRS of every service (default: loopback). */
  allowedTargetCidrs?: string;
  /** Extra variables of a service (the gateway's too), by its name (e.g. a short sweep interval for a test). */
  env?: Record<string, Env>;
  /** The scan every log line goes through (default: a new one); see Stack.leaks. */
  leaks?: LeakScan;
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const PACK_ALLOWED_TARGET_CIDRS = options.allowedTargetCidrs ?? LOOPBACK_TARGETS;
  const adminToken = `pack_${randomBytes(32).toString('base64url')}`;
  const namespace = uniqueName('e2e');
  const upstreams: Env = {};
  const services: RunningService<never>[] = [];
  const leaks = options.leaks ?? new LeakScan();
  // Every stack traces, every span sampled, to a local collector that the leak scans read.
  const traces = await stackCollector();
  const spansBefore = traces.spans.length;
  const logDestination = leaks.logDestination('stack log');
  const logged: Env = { LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'debug' };
  const urls: Record<string, string> = {};
  const envs: Record<string, Env> = {};
  const listening = new Map<string, Promise<PlainHarness<never>>>();
  for (const { kind, env, needs } of BEHIND_GATEWAY) {
    const start = async () => {
      const called = await Promise.all(needs.map(async (need) => [need, (await listening.get(need)!).url]));
      envs[kind.name] = testEnv(kind.name, {
        ...Object.fromEntries(called),
        PACK_ALLOWED_TARGET_CIDRS,
        BROKER_NAMESPACE: namespace,
        ...options.env?.[kind.name],
      });
      // The level only for the stack's own services: a replica a test starts from `envs` logs as usual.
      return startHarness(kind as unknown as PlainKind<never>, {
        env: { ...envs[kind.name]!, ...logged, ...options.env?.[kind.name] },
        logDestination,
        databaseServer: envs[kind.name]!.MONGO_URL,
      });
    };
    listening.set(env, start());
  }
  const harnesses = await Promise.all([...listening.values()]);
  BEHIND_GATEWAY.forEach(({ kind, env }, index) => {
    services.push(harnesses[index]!.service);
    upstreams[env] = harnesses[index]!.url;
    urls[kind.name] = harnesses[index]!.url;
  });
  const gatewayHarness = await startHarness(gatewayKind, {
    env: testEnv('gateway', {
      ...upstreams,
      BROKER_NAMESPACE: namespace,
      PACK_ADMIN_TOKEN: adminToken,
      ...logged,
      ...options.env?.gateway,
    }),
    logDestination,
    databaseServer: options.env?.gateway?.MONGO_URL,
  });
  const gateway = gatewayHarness.service;
  harnesses.unshift(gatewayHarness as unknown as PlainHarness<never>);
  services.unshift(gateway as unknown as RunningService<never>);
  await everyServiceReady(services);

  let openApi: Promise<OpenApiCheck> | undefined;
  // The gateway leaves out a service that did not answer within 2 s (x-missing-services), as a
  // busy machine's may not: the check waits for a document with all of them.
  const loadOpenApi = () =>
    (openApi ??= waitFor(
      async () => {
        const response = await fetch(`${gateway.url}/v1/openapi.json`);
        const document = (await response.json()) as OpenApiCheck['document'] & {
          'x-missing-services'?: string[];
        };
        return !document['x-missing-services']?.length && new OpenApiCheck(document);
      },
      { timeoutMs: CEILINGS.longWait, intervalMs: 1000, what: 'an OpenAPI document of every service' },
    ));

  const stack: Stack = {
    gateway: gateway.url,
    namespace,
    adminToken,
    brokerNamespace: namespace,
    services,
    envs,
    urls,
    service(name) {
      const found = services.find((service) => service.definition.name === name);
      if (!found) throw new Error(`no service named ${name} in the stack`);
      return found;
    },
    async call(method, path, options = {}) {
      leaks.seedFrom(options.body, `${method} ${path}`);
      const result = await call(gateway.url, method, path, {
        ...options,
        token: options.token === undefined ? adminToken : options.token,
      });
      leaks.seedFrom(result.body, `the answer to ${method} ${path}`);
      (await loadOpenApi()).check({
        method,
        path,
        status: result.status,
        contentType: result.headers.get('content-type'),
        body: result.body,
      });
      return result;
    },
    async issueToken(role) {
      const issued = await stack.call('POST', '/v1/core/tokens/', {
        body: { username: uniqueName(role), role },
      });
      if (issued.status !== 201) throw new Error(`issuing a ${role} token answered ${issued.status}`);
      return issued.body.token as string;
    },
    openApi: loadOpenApi,
    leaks,
    traces,
    async stop() {
      // The gateway first, then the rest together: each harness removes its service's database
      // and queues as it stops.
      const [front, ...behind] = harnesses;
      await front!.stop();
      await Promise.all(behind.map((harness) => harness.stop()));
      leaks.rescanLogs();
      await flushSpans();
      for (const span of traces.spans.slice(spansBefore))
        leaks.scan(
          `the span "${span.name}" of ${span.service}`,
          JSON.stringify({ attributes: span.attributes, events: span.events, status: span.status }),
        );
      const found = leaks.report();
      if (found.length > 0)
        throw new Error(`secrets in the stack's log lines or spans:\n${found.join('\n')}`);
    },
  };
  return stack;
}

/**
 * Waits until every service answers /readyz with 200: its broker connected and its queues bound.
 * An event published before its consumer's queue is bound is routed nowhere (the broker's
 * warning, decision 0011), and a service's queues are declared in the background after it
 * listens: on a three-node cluster, under load, slower than the llm-gateway's first event.
 */
async function everyServiceReady(services: readonly RunningService<never>[]): Promise<void> {
  const ready = (service: RunningService<never>) => answersReady(service.metricsUrl);
  await waitFor(async () => (await Promise.all(services.map(ready))).every(Boolean), {
    what: 'every service of the stack to answer /readyz with 200',
  });
}

/**
 * Waits until the orchestrator knows an LLM model from the llm-gateway's `llm.model.changed.v1`
 * (it refuses processors on a model it does not know).
 */
export async function modelKnownToOrchestrator(stack: Stack, modelId: number): Promise<void> {
  await waitFor(
    async () => {
      const models = await storedCollection(stack.service('pipeline-orchestrator'), 'llm_models');
      return models.some((model) => model._id === modelId) || undefined;
    },
    { what: `the orchestrator to learn of LLM model ${modelId}` },
  );
}

/**
 * Gives a Service an active processor of each kind on one model (the three stages by default),
 * each retried until the orchestrator knows the Service from the catalog's event.
 */
export async function activeProcessors(
  stack: Stack,
  serviceId: number,
  llmModel: number,
  kinds: readonly string[] = ['config', 'verify', 'execution'],
): Promise<void> {
  for (const kind of kinds) {
    const body = {
      name: kind,
      service: serviceId,
      kind,
      llm_model: llmModel,
      prompt: `Do ${kind}.`,
      active: true,
    };
    await waitFor(async () => (await stack.call('POST', '/v1/ai/processors/', { body })).status === 201, {
      what: `the ${kind} processor`,
    });
  }
}

/** Messages an orchestrator's pipeline consumer acknowledged (approvals and generate results). */
export function pipelineMessagesHandled(metricsUrl: string): Promise<number> {
  return orchestratorMessagesHandled(metricsUrl, 'pipelines');
}

/** Messages an orchestrator's side-processor consumer acknowledged (new Change Instances, validator and optimizer results). */
export function sideProcessorMessagesHandled(metricsUrl: string): Promise<number> {
  return orchestratorMessagesHandled(metricsUrl, 'side-processors');
}

async function orchestratorMessagesHandled(metricsUrl: string, consumer: string): Promise<number> {
  return messagesConsumed(metricsUrl, `queue="[^"]*pipeline-orchestrator\\.${consumer}"[^}]*outcome="ack"`);
}

/** The service's `broker_consumed_total`, summed over the series whose labels match `labels`. */
async function messagesConsumed(metricsUrl: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const series = new RegExp(`^broker_consumed_total\\{[^}]*${labels}[^}]*\\} (\\d+)$`, 'gm');
  return [...text.matchAll(series)].reduce((sum, match) => sum + Number(match[1]), 0);
}

/**
 * Creates, as the admin, an LLM model on a fake OpenAI provider at `providerUrl` (0.15 and 0.6
 * per 1M input and output tokens, unless `fields` say otherwise); returns its id.
 */
export async function modelOnFakeProvider(
  stack: Stack,
  name: string,
  providerUrl: string,
  apiKey: string,
  fields: Record<string, unknown> = {},
): Promise<number> {
  const created = await stack.call('POST', '/v1/ai/llm_models/', {
    body: {
      name,
      provider: 'vendor1',
      model_name: 'gpt-4o-mini',
      input_price_per_1m_tokens: '0.15',
      output_price_per_1m_tokens: '0.6',
      extra_data: { api_key: apiKey, base_url: `${providerUrl}/v1` },
      ...fields,
    },
  });
  if (created.status !== 201) throw new Error(`creating model ${name} answered ${created.status}`);
  return created.body.id as number;
}

/**
 * Runs `request` and expects it refused with a problem+json `status` naming exactly `fields`
 * (when given), with nothing stored in `running`'s database (its outbox drained, its budget
 * counts and the sweeper's pending work settled first, so only the request can change it); a
 * failure shows each changed document before and after.
 */
export async function expectRefused(
  running: RunningService<never>,
  request: () => Promise<CallResult>,
  status: number,
  fields?: string[],
): Promise<CallResult> {
  if (running.definition.usesBroker !== false) await outboxDrained(running);
  await budgetsSettled(running);
  await sweepsSettled(running);
  const before = await storedDocuments(running);
  const answer = await request();
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  if (fields) expect(Object.keys(answer.body.errors ?? {})).toEqual(fields);
  expect(changedDocuments(before, await storedDocuments(running))).toEqual({});
  return answer;
}

/** Messages every consumer of the stack has finished with (acknowledged, retried or dead-lettered). */
async function messagesFinished(stack: Stack): Promise<number> {
  const counts = await Promise.all(stack.services.map((running) => messagesConsumed(running.metricsUrl)));
  return counts.reduce((sum, count) => sum + count, 0);
}

/**
 * Waits until every event the stack recorded so far has been handled: no service has an event
 * left to publish, every queue of the stack's namespace is empty with nothing unacknowledged, and
 * no consumer finished a message while this looked (a consumer acknowledges after its writes, so
 * an event it recorded meanwhile would show in the next look). A moment when all three hold, not
 * a quiet window: what a test checks next can no longer be changed by an event in flight.
 */
export async function stackAtRest(stack: Stack): Promise<void> {
  await waitFor(
    async () => {
      const finished = await messagesFinished(stack);
      for (const running of stack.services) if ((await pendingEvents(running)) > 0) return false;
      const depths = [...(await queueDepths(stack.brokerNamespace)).values()];
      if (depths.some((queue) => queue.messages > 0 || queue.unacknowledged > 0)) return false;
      return (await messagesFinished(stack)) === finished;
    },
    { what: 'the stack to handle every event recorded so far' },
  );
}
