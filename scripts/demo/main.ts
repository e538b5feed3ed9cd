/**
 * `pnpm demo`: the product's first run against the stack `pnpm start` runs, through the public API only.
 *
 * Starts a fake OpenAI-shape provider and a webhook receiver on loopback, then as the admin
 * creates an LLM model and two users; as the service owner a Service (auto approval) with
 * config, verify and execution processors and a webhook; as the consumer submits a declaration.
 * Prints each stage and the webhook delivery as they happen; then the healing scene (healing.ts):
 * a configuration corrected in run 2 from an outside simulation's error; then where to look (with
 * the trace of the declaration, sent with a `traceparent` the demo made, in the local viewer).
 * Exit 0 once EXECUTION is OK, the receiver got the delivery and the scene healed; 1 with the
 * reason otherwise.
 *
 * Environment: PACK_GATEWAY_URL and PACK_ADMIN_TOKEN (else the running `pnpm start`'s, from
 * .local/stack.json or PACK_STACK_FILE; else http://127.0.0.1:8080 and the token in .local/dev.env),
 * PACK_METRICS_URLS (`name=url,...`; else deploy/services.yaml), PACK_DEMO_TIMEOUT_SECONDS (120),
 * PACK_TRACE_VIEWER_URL (else http://127.0.0.1:9411, scripts/trace-viewer.sh's default).
 */
import { randomBytes } from 'node:crypto';
import type { LlmModelView, ProcessorView, WebhookView } from '@pack/contracts';
import { adminToken, Api, DemoError, describe, gatewayUrl, sleep } from './api';
import {
  signatureValid,
  startFakeProvider,
  STAGE_MARKERS,
  WebhookReceiver,
  type Delivery,
} from './local-servers';
import { excerpt, metricsTargets, say, showMetrics, whereToLook, type Created } from './report';
import { newTrace, traceLines, type DemoTrace } from './trace';
import { watchPipeline } from './watch';
import { healingScene } from './healing';

/** Answers of routes whose schemas live in their services, as far as the demo reads them. */
interface Issued {
  token: string;
}
interface ConnectionTest {
  latency_ms: number;
  reply_excerpt: string;
  /** A decimal string, `{unpriced: true}`, or null when hidden. */
  cost: unknown;
}
interface ServiceView {
  id: number;
  name: string;
}
interface Submission {
  change_instance: { id: number; state: string; service_item: number };
}

const LOOPBACK_HINT =
  'the stack refuses loopback targets: start it with PACK_ALLOWED_TARGET_CIDRS=127.0.0.0/8,::1/128 ' +
  '(`pnpm start` sets this unless the variable is set)';

const CONFIG_SCHEMA = {
  type: 'object',
  required: ['vm'],
  properties: {
    vm: {
      type: 'object',
      required: ['flavor'],
      properties: { flavor: { type: 'string' }, vcpus: { type: 'integer' }, memory_gb: { type: 'integer' } },
    },
    backup: { type: 'string' },
  },
};

async function waitForGateway(api: Api, token: string, deadline: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    if (attempt === 1) say(`waiting for the gateway at ${api.gateway} (the stack may still be starting)`);
    try {
      const answer = await api.call('GET', '/v1/core/general_settings/', token);
      if (answer.status === 200) return;
      if (answer.status === 401 || answer.status === 403)
        throw new DemoError(`the gateway at ${api.gateway} refused the admin token (${answer.status})`);
      if (Date.now() > deadline)
        throw new DemoError(`the gateway answered ${answer.status}: is the stack ready?`);
    } catch (error) {
      if (!(error instanceof DemoError) || error.message.includes('refused the admin token')) throw error;
      if (Date.now() > deadline) throw error;
    }
    await sleep(500);
  }
}

async function run(env: NodeJS.ProcessEnv, receiver: WebhookReceiver, trace: DemoTrace): Promise<Created> {
  const gateway = gatewayUrl(env);
  const timeoutSeconds = Number(env.PACK_DEMO_TIMEOUT_SECONDS ?? 120);
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 3600)
    throw new DemoError(
      `PACK_DEMO_TIMEOUT_SECONDS must be whole seconds, 1 to 3600 (not "${env.PACK_DEMO_TIMEOUT_SECONDS}")`,
    );
  const deadline = Date.now() + timeoutSeconds * 1000;
  const api = new Api(gateway);
  const admin = adminToken(env);
  const fake = await startFakeProvider();
  try {
    say(`pack demo against ${gateway} (at most ${timeoutSeconds} s)`);
    say(`fake LLM provider (OpenAI chat completions, any key) at ${fake.url}/v1`);
    await receiver.start();
    say(`webhook receiver at ${receiver.url}/hooks/pack-demo`);
    await waitForGateway(api, admin, Math.min(deadline, Date.now() + 30_000));

    const run = randomBytes(3).toString('hex');
    const token = async (role: string) => {
      const username = `demo-${role.replace('_', '-')}-${run}`;
      const body = { username, role };
      const issued = await api.expect<Issued>(
        201,
        `a ${role} token`,
        'POST',
        '/v1/core/tokens/',
        admin,
        body,
      );
      return { username, token: issued.token };
    };
    const owner = await token('service_owner');
    const consumer = await token('consumer');
    say(
      `users: ${owner.username} (service_owner), ${consumer.username} (consumer), tokens issued by the admin`,
    );

    const model = await api
      .expect<LlmModelView>(201, 'the LLM model', 'POST', '/v1/ai/llm_models/', admin, {
        name: `Demo model ${run}`,
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        prompt: 'You are the platform assistant. Answer with JSON only.',
        input_price_per_1m_tokens: '0.15',
        output_price_per_1m_tokens: '0.6',
        extra_data: { api_key: 'sk-demo-no-key-needed', base_url: `${fake.url}/v1` },
      })
      .catch((error: Error) => {
        // Model URLs pass the address guard when stored: a stack refusing loopback says so here.
        throw /PACK_ALLOWED_TARGET_CIDRS/.test(error.message) ? new DemoError(LOOPBACK_HINT) : error;
      });
    say(`LLM model #${model.id} "${model.name}" (vendor1 ${model.model_name}, 0.15 / 0.6 per 1M tokens)`);
    const probe = await api.call<ConnectionTest>(
      'POST',
      `/v1/ai/llm_models/test_connection/${model.id}/`,
      admin,
      {},
    );
    if (probe.status !== 200) {
      const text = JSON.stringify(probe.body);
      if (/refused|PACK_ALLOWED_TARGET_CIDRS/i.test(text)) throw new DemoError(LOOPBACK_HINT);
      throw new DemoError(`the model's connection test answered ${probe.status}: ${excerpt(text, 300)}`);
    }
    const probeCost = typeof probe.body.cost === 'string' ? `, cost ${probe.body.cost} USD` : '';
    say(
      `  test_connection: ok in ${probe.body.latency_ms} ms${probeCost}, reply "${excerpt(probe.body.reply_excerpt, 60)}"`,
    );

    const service = await api.expect<ServiceView>(
      201,
      'the Service',
      'POST',
      '/v1/catalog/services/',
      owner.token,
      {
        name: `Demo VM ${run}`,
        description: 'A virtual machine, configured, verified and delivered by the pack pipeline',
        auto_approval: true,
      },
    );
    say(`Service #${service.id} "${service.name}" owned by ${owner.username}, auto approval on`);

    const processors: string[] = [];
    for (const kind of ['config', 'verify', 'execution'] as const) {
      const created = await api.createOnceKnown<ProcessorView>(
        `the ${kind} processor`,
        '/v1/ai/processors/',
        owner.token,
        {
          name: `Demo ${kind} ${run}`,
          service: service.id,
          kind,
          llm_model: model.id,
          prompt: `${STAGE_MARKERS[kind]} Produce the ${kind} PackData for the declared virtual machine.`,
          response_schema: kind === 'config' ? CONFIG_SCHEMA : null,
          active: true,
        },
        ['service', 'llm_model'],
        deadline,
      );
      processors.push(`${kind} #${created.id}`);
    }
    say(`AI processors (active): ${processors.join(', ')}; config answers to a JSON Schema`);

    const target = `${receiver.url}/hooks/pack-demo`;
    const webhook = await api
      .createOnceKnown<WebhookView>(
        'the webhook',
        '/v1/external/serviceowner/webhooks/',
        owner.token,
        {
          name: `Demo hook ${run}`,
          description: 'Tells the receiver when a Change Instance is approved',
          service: service.id,
          target_url: target,
          authorization: 'Bearer demo-receiver-token',
          change_instance_state: 'APPROVED',
        },
        ['service'],
        deadline,
      )
      .catch((error: Error) => {
        throw /target_url/.test(error.message) ? new DemoError(`${LOOPBACK_HINT} (${error.message})`) : error;
      });
    say(`webhook #${webhook.id} -> ${target} when a Change Instance becomes APPROVED`);
    receiver.onDelivery((delivery) => {
      if (delivery.path === '/hooks/pack-demo') showDelivery(delivery, webhook.secret);
    });

    const declaration = { size: 'large', region: 'eu-west-1', backup: true };
    const submitted = await api.expect<Submission>(
      201,
      'the declaration',
      'POST',
      `/v1/catalog/services/${service.id}/declarations/`,
      consumer.token,
      { declaration },
      { traceparent: trace.traceparent },
    );
    const instance = submitted.change_instance;
    say(
      `${consumer.username} submitted ${JSON.stringify(declaration)}: ` +
        `Change Instance #${instance.id} ${instance.state}, Service Item #${instance.service_item}`,
    );
    say(`  trace ${trace.traceId} (the traceparent sent with the declaration; where to open it: at the end)`);

    const pipeline = await watchPipeline({
      api,
      token: owner.token,
      serviceItem: instance.service_item,
      webhook: webhook.id,
      receiver,
      deadline,
    });
    const healed = await healingScene({
      api,
      owner: owner.token,
      consumer: consumer.token,
      model: model.id,
      receiver,
      run,
      deadline,
    });
    return {
      healing: healed.serviceItem,
      model: model.id,
      service: service.id,
      webhook: webhook.id,
      changeInstance: instance.id,
      serviceItem: instance.service_item,
      pipeline,
    };
  } finally {
    await fake.close();
  }
}

function showDelivery(delivery: Delivery, secret: string): void {
  const signature = signatureValid(delivery, secret) ? 'signature valid' : 'SIGNATURE INVALID';
  say(
    `webhook delivery received: POST ${delivery.path}, webhook-id ${String(delivery.headers['webhook-id'])}, ` +
      `${signature}, authorization ${String(delivery.headers.authorization)}`,
  );
  say(`  body ${excerpt(delivery.body)}`);
}

async function main(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const receiver = new WebhookReceiver();
  const trace = newTrace();
  try {
    const created = await run(env, receiver, trace);
    const gateway = gatewayUrl(env);
    whereToLook(gateway, created, await traceLines(env, trace.traceId));
    await showMetrics(metricsTargets(env, gateway), created.model);
    process.stdout.write(
      '\ndemo OK: the pipeline reached EXECUTION OK and the webhook delivery arrived; the healing scene corrected its configuration in run 2\n',
    );
    return 0;
  } catch (error) {
    const message = error instanceof DemoError ? error.message : `unexpected: ${describe(error)}`;
    process.stderr.write(`\ndemo FAILED: ${message}\n`);
    return 1;
  } finally {
    await receiver.close().catch(() => undefined);
  }
}

if (require.main === module) {
  void main().then((code) => process.exit(code));
}
