import { randomBytes } from 'node:crypto';
import {
  CEILINGS,
  Receiver,
  SPAN_KIND,
  spawnService,
  startFakeOpenAi,
  waitFor,
  type FakeProviderServer,
  type ReceivedSpan,
  seededSecret,
} from '@pack/testkit';
import { context, contextOf } from '@pack/tracing';
import { latestStages } from '../pipeline-actors';
import { modelKnownToOrchestrator, modelOnFakeProvider, startStack, type Stack } from '../stack';

/**
 * Random, not a readable name: the stack's scan looks for every piece of it, and a readable key
 * (`sk-e2e-tracing-0000`) was found in a log line's stack trace, whose path names this file.
 */
const KEY = seededSecret('the provider key', { prefix: 'sk-' });
const KINDS = ['config', 'verify', 'execution'];
const SERVICES = [
  'catalog',
  'gateway',
  'llm-gateway',
  'pipeline-orchestrator',
  'settings',
  'webhook-dispatcher',
];
/** Set-up and each test: the long ceiling (they drive volume and restarts). */
const BOUND_MS = CEILINGS.longTest;

/** A client's own trace context, as the demo makes one: the trace id is the client's. */
function clientTrace() {
  const traceId = randomBytes(16).toString('hex');
  return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
}

/** The spans whose parent is not in the trace (a trace with parent links intact has one: the client's call). */
const orphans = (spans: ReceivedSpan[]) => {
  const ids = new Set(spans.map((span) => span.spanId));
  return spans.filter((span) => !ids.has(span.parentSpanId));
};

/** Consumer spans whose parent is a span of another service: each is one crossing of the broker. */
function brokerCrossings(spans: ReceivedSpan[]): string[] {
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  return spans
    .filter((span) => span.kind === SPAN_KIND.consumer)
    .filter((span) => byId.get(span.parentSpanId)?.service !== span.service)
    .map((span) => `${byId.get(span.parentSpanId)?.service} -> ${span.service}: ${span.name}`);
}

describe('tracing: one trace from the gateway to the webhook', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let hooks: Receiver;
  let owner: string;
  let consumer: string;
  let service: number;

  beforeAll(async () => {
    [stack, fake, hooks] = await Promise.all([
      startStack({ env: { 'llm-gateway': { LLM_CALL_LEASE_MS: '1000' } } }),
      startFakeOpenAi({ apiKey: KEY }),
      new Receiver().start(),
    ]);
    stack.leaks.seed('the provider key', KEY);
    [owner, consumer] = await Promise.all([stack.issueToken('service_owner'), stack.issueToken('consumer')]);
    const model = await modelOnFakeProvider(stack, 'Traced model', fake.url, KEY);
    await modelKnownToOrchestrator(stack, model);
    const created = await stack.call('POST', '/v1/catalog/services/', {
      token: owner,
      body: { name: 'Traced service', auto_approval: true },
    });
    service = created.body.id as number;
    for (const kind of KINDS) {
      const body = { name: kind, service, kind, llm_model: model, prompt: `Do ${kind}.`, active: true };
      // The catalog's Service event reaches the orchestrator asynchronously: 400 until then.
      await waitFor(
        async () => (await stack.call('POST', '/v1/ai/processors/', { token: owner, body })).status === 201,
        { what: `the ${kind} processor` },
      );
    }
    const webhook = { name: 'Traced hook', service, target_url: hooks.url };
    await waitFor(
      async () =>
        (await stack.call('POST', '/v1/external/serviceowner/webhooks/', { token: owner, body: webhook }))
          .status === 201,
      { what: 'the webhook' },
    );
  }, BOUND_MS);
  afterAll(async () => {
    await Promise.all([fake?.close(), hooks?.stop()]);
    await stack?.stop();
  });

  /** Submits a declaration inside the client's trace; the change instance's Service Item. */
  async function submit(traceparent: string, n: number) {
    const submitted = await context.with(contextOf({ traceparent }), () =>
      stack.call('POST', `/v1/catalog/services/${service}/declarations/`, {
        token: consumer,
        body: { declaration: { n } },
      }),
    );
    expect(submitted.status).toBe(201);
    return { item: submitted.body.change_instance.service_item as number, headers: submitted.headers };
  }

  const allOk = (item: number) =>
    waitFor(
      async () => {
        const stages = await latestStages(stack, item);
        return stages.length === 3 && stages.every((stage) => stage.state === 'OK') && stages;
      },
      { what: `the three stages of item ${item} OK` },
    );

  it(
    'a declaration submitted with auto approval is one trace: the submission, the three stages, the LLM calls and the webhook delivery, from all six services across the broker',
    async () => {
      const { traceId, traceparent } = clientTrace();
      const { item, headers } = await submit(traceparent, 1);
      // The gateway continues the client's trace and names its own span in the answer.
      expect(headers.get('traceparent')).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
      await allOk(item);
      await waitFor(() => hooks.requests.length > 0, { what: 'the webhook delivery' });

      const spans = await stack.traces.waitForTrace(
        traceId,
        (all) =>
          all.filter((span) => span.name === 'pack.stage').length >= 3 &&
          all.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat').length >= 3 &&
          all.some(
            (span) => span.name === 'webhook delivery' && span.attributes['pack.webhook.outcome'] === 'ok',
          ) &&
          // A parent ends after its children: its batch may come later.
          orphans(all).length === 1,
        'the stages, the LLM calls and the webhook delivery in the trace',
      );
      expect(new Set(spans.map((span) => span.service))).toEqual(new Set([...SERVICES, 'e2e-test']));
      // Parent links intact: the one span without its parent here is the client's own call.
      expect(orphans(spans).map((span) => [span.service, span.kind])).toEqual([
        ['e2e-test', SPAN_KIND.client],
      ]);
      const crossings = brokerCrossings(spans);
      expect(crossings.length).toBeGreaterThanOrEqual(4);
      const stages = spans.filter((span) => span.name === 'pack.stage').map((span) => span.attributes);
      // (A stage whose scheduling lost a race to another handler has a span of its own too.)
      expect([...new Set(stages.map((stage) => stage['pack.stage']))]).toEqual([
        'CONFIG',
        'VERIFY',
        'EXECUTION',
      ]);
      expect(stages.every((stage) => stage['pack.service_item.id'] === item && stage['pack.run'] === 1)).toBe(
        true,
      );
      const calls = spans.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat');
      for (const call of calls)
        expect(call.attributes).toMatchObject({
          'gen_ai.system': 'vendor1',
          'gen_ai.request.model': 'gpt-4o-mini',
          'gen_ai.usage.input_tokens': expect.any(Number),
          'gen_ai.usage.output_tokens': expect.any(Number),
          'pack.llm.cost': expect.stringMatching(/^\d+\.\d+$/),
        });
      // Prompts and completions are not recorded by default.
      expect(calls.flatMap((call) => call.events.map((event) => event.name))).not.toContain('gen_ai.content');
      // The outbox relay continues the trace of the write that made the event.
      expect(spans.some((span) => span.name === 'outbox relay' && span.service === 'catalog')).toBe(true);
      // No span records a body or an Authorization header (the provider key is looked for in
      // every span by the stack's leak scan at its stop).
      expect(
        spans.some((span) => Object.keys(span.attributes).some((key) => /authorization|body/i.test(key))),
      ).toBe(false);
      // Every log line written in the trace's spans joins it, in every service that logged one.
      const lines = stack.leaks
        .loggedLines()
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((line) => line.trace_id === traceId);
      expect(lines.every((line) => typeof line.span_id === 'string' && line.span_id.length === 16)).toBe(
        true,
      );
      expect(lines.some((line) => line.service === 'gateway' && line.msg === 'request')).toBe(true);
      // The gateway's latency histogram holds the submission's trace id as an exemplar (OpenMetrics).
      const exemplars = await fetch(`${stack.service('gateway').metricsUrl}/metrics/exemplars`);
      expect(exemplars.headers.get('content-type')).toMatch(/^application\/openmetrics-text/);
      expect(await exemplars.text()).toMatch(
        new RegExp(`^http_request_duration_seconds_bucket\\{.*\\} \\d+ # \\{trace_id="${traceId}"\\}`, 'm'),
      );
      process.stdout.write(
        `one trace: ${spans.length} spans from ${new Set(spans.map((s) => s.service)).size} services, ${crossings.length} broker crossings\n`,
      );
    },
    BOUND_MS,
  );

  it(
    'the llm-gateway killed with -9 mid-call: the taken-over call is in the trace of its submission',
    async () => {
      const replica = await spawnService(
        'llm-gateway',
        {
          ...stack.envs['llm-gateway'],
          PORT: '0',
          METRICS_PORT: '0',
          OTEL_EXPORTER_OTLP_ENDPOINT: stack.traces.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_BSP_SCHEDULE_DELAY: '100',
        },
        { what: 'the second llm-gateway ready' },
      );
      // Every call is held open until the kill: the killed replica is in the middle of some when it
      // dies, however fast or slow the machine (calls taking 1.5 s all ended, on a loaded machine,
      // before both replicas held one at once).
      let release!: () => void;
      fake.always({ until: new Promise<void>((resolve) => (release = resolve)) });
      const claims = stack.service('llm-gateway').context.mongo.connection.collection('llm_call_claims');
      const calls = stack.service('llm-gateway').context.mongo.connection.collection('llm_calls');
      const before = new Set((await claims.find({}, { projection: { _id: 1 } }).toArray()).map((c) => c._id));
      const traces = Array.from({ length: 4 }, clientTrace);
      const submitted = Promise.all(traces.map((trace, n) => submit(trace.traceparent, 10 + n)));
      // Killed once both replicas hold calls not finished yet.
      await waitFor(
        async () => {
          const finished = new Set(
            (await calls.find({}, { projection: { _id: 1 } }).toArray()).map((c) => c._id),
          );
          const open = (await claims.find({}).toArray()).filter(
            (claim) => !before.has(claim._id) && !finished.has(claim._id),
          );
          return new Set(open.map((claim) => claim.owner)).size === 2;
        },
        { what: 'calls held by both llm-gateway replicas' },
      );
      replica.kill('SIGKILL');
      expect((await replica.exited).signal).toBe('SIGKILL');
      release();
      for (const { item } of await submitted) await allOk(item);

      const ids = new Set(traces.map((trace) => trace.traceId));
      const takenOver = await waitFor(
        () => {
          const found = stack.traces.spans.filter(
            (span) => ids.has(span.traceId) && Number(span.attributes['pack.llm.takeovers']) >= 1,
          );
          return found.length > 0 && found;
        },
        { what: 'a taken-over LLM call among the traces of the submissions' },
      );
      const ancestry = (call: ReceivedSpan) => {
        const byId = new Map(stack.traces.trace(call.traceId).map((span) => [span.spanId, span]));
        const chain: ReceivedSpan[] = [];
        for (let at: ReceivedSpan | undefined = call; at; at = byId.get(at.parentSpanId)) chain.push(at);
        return chain;
      };
      // A call's span ends before its consumer span does (that one ends once the result is
      // published, and the pipeline may end meanwhile): the ancestors may come in a later export.
      // Only a hang ends the wait; the assertions below then say where a chain stopped.
      await waitFor(() => takenOver.every((call) => ancestry(call).at(-1)?.service === 'e2e-test'), {
        what: 'the ancestors of every taken-over call exported, up to the submission',
      }).catch(() => undefined);
      for (const call of takenOver) {
        // Its ancestors are all there, up to the gateway's span of the submission.
        const chain = ancestry(call);
        expect(chain.at(-1)).toMatchObject({ service: 'e2e-test', kind: SPAN_KIND.client });
        expect(chain.some((span) => span.service === 'gateway' && span.kind === SPAN_KIND.server)).toBe(true);
        expect(call.service).toBe('llm-gateway');
      }
    },
    BOUND_MS,
  );
});
