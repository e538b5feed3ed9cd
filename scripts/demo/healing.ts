/**
 * The demo's healing scene (docs/decisions/0054): a configuration the pipeline corrects itself.
 * A Service with config and execution processors, its VERIFY left to an outside simulation (the
 * demo). The config model asks for more disk than the declaration's quota until its prompt holds
 * that earlier configuration and the simulation's error; the demo's simulation reports the error
 * into EXECUTION with retrigger=true, run 2's CONFIG corrects it, the simulation passes it (a push
 * into VERIFY), EXECUTION runs, the Change Instance completes and its webhook fires.
 */
import type { ExecutionContextView, PipelineView, ProcessorView, WebhookView } from '@pack/contracts';
import { DemoError, sleep, type Api } from './api';
import { HEALING_MARKERS, signatureValid, type Delivery, type WebhookReceiver } from './local-servers';
import { excerpt, say } from './report';

const PACK = '/v1/external/serviceowner/pack/';
const POLL_MS = 300;
const HOOK_PATH = '/hooks/pack-demo-healing';

export interface HealingCast {
  api: Api;
  owner: string;
  consumer: string;
  model: number;
  receiver: WebhookReceiver;
  run: string;
  deadline: number;
}

interface Config {
  disk_gb: number;
}

/** The outside simulation: the configuration's disk against the declaration's quota. */
const simulate = (config: Config, quota: number) =>
  config.disk_gb > quota
    ? `simulation: disk quota exceeded, ${config.disk_gb} GB asked, ${quota} GB allowed`
    : null;

export async function healingScene(
  cast: HealingCast,
): Promise<{ serviceItem: number; changeInstance: number }> {
  const { api, owner, run, deadline } = cast;
  say('');
  say('healing scene: the pipeline corrects its own configuration from an outside simulation error');
  const service = await api.expect<{ id: number; name: string }>(
    201,
    'the healing Service',
    'POST',
    '/v1/catalog/services/',
    owner,
    {
      name: `Demo healing ${run}`,
      description: 'A web server whose configuration an outside simulation checks',
      auto_approval: true,
    },
  );
  for (const kind of ['config', 'execution'] as const)
    await api.createOnceKnown<ProcessorView>(
      `the healing ${kind} processor`,
      '/v1/ai/processors/',
      owner,
      {
        name: `Demo healing ${kind} ${run}`,
        service: service.id,
        kind,
        llm_model: cast.model,
        prompt: `${HEALING_MARKERS[kind]} Produce the ${kind} PackData for the declared web server.`,
        active: true,
      },
      ['service', 'llm_model'],
      deadline,
    );
  const webhook = await api.createOnceKnown<WebhookView>(
    'the healing webhook',
    '/v1/external/serviceowner/webhooks/',
    owner,
    {
      name: `Demo healing hook ${run}`,
      description: 'Tells the receiver when the healed Change Instance is done',
      service: service.id,
      target_url: `${cast.receiver.url}${HOOK_PATH}`,
      authorization: 'Bearer demo-receiver-token',
      change_instance_state: 'COMPLETED',
    },
    ['service'],
    deadline,
  );
  say(
    `Service #${service.id} "${service.name}": config and execution processors, VERIFY is the simulation's; webhook #${webhook.id} on COMPLETED`,
  );
  const delivered = new Promise<Delivery>((resolve) =>
    cast.receiver.onDelivery((delivery) => delivery.path === HOOK_PATH && resolve(delivery)),
  );

  const quota = 250;
  const declaration = { app: 'web', disk_quota_gb: quota };
  const submitted = await api.expect<{ change_instance: { id: number; service_item: number } }>(
    201,
    'the healing declaration',
    'POST',
    `/v1/catalog/services/${service.id}/declarations/`,
    cast.consumer,
    { declaration },
  );
  const { id: instance, service_item: item } = submitted.change_instance;
  say(`submitted ${JSON.stringify(declaration)}: Change Instance #${instance}, Service Item #${item}`);

  const first = await configOf(api, owner, item, 1, deadline);
  say(`run 1 CONFIG OK      ${excerpt(first)}`);
  const error = simulate(first, quota);
  if (!error)
    throw new DemoError('the healing scene: run 1 configuration passed the simulation; nothing to heal');
  const report = await api.expect<{ retrigger: PipelineView | null }>(
    201,
    'the simulation report',
    'POST',
    `${PACK}data/service_item/${item}/execution/?retrigger=true`,
    owner,
    { errors: [error] },
  );
  say(`${error}: pushed into EXECUTION with retrigger=true, run ${report.retrigger?.run ?? '?'} started`);
  await showContext(api, owner, item);

  const second = await configOf(api, owner, item, 2, deadline);
  say(`run 2 CONFIG OK      ${excerpt(second)}`);
  say(`  changed from run 1: ${changes(first, second).join(', ') || 'nothing'}`);
  if (simulate(second, quota))
    throw new DemoError('the healing scene: run 2 did not correct the configuration');
  await api.expect(201, 'the simulation pass', 'POST', `${PACK}data/service_item/${item}/verify/`, owner, {
    simulation: 'passed',
  });
  say('simulation passed: pushed into VERIFY, EXECUTION started');
  await until(deadline, 'the healed Change Instance COMPLETED', async () => {
    const answer = await api.call<{ state: string }>(
      'GET',
      `/v1/catalog/change_instances/${instance}/`,
      owner,
    );
    return answer.status === 200 && answer.body.state === 'COMPLETED';
  });
  const delivery = await Promise.race([
    delivered,
    sleep(Math.max(0, deadline - Date.now())).then(() => null),
  ]);
  if (!delivery) throw new DemoError('timed out waiting for the healing webhook delivery');
  const signature = signatureValid(delivery, webhook.secret) ? 'signature valid' : 'SIGNATURE INVALID';
  say(
    `Change Instance #${instance} COMPLETED after 2 runs; webhook delivery ${signature}, body ${excerpt(delivery.body)}`,
  );
  return { serviceItem: item, changeInstance: instance };
}

/** What the next CONFIG is given, as the context read route answers it: run 1's part. */
async function showContext(api: Api, owner: string, item: number): Promise<void> {
  const context = await api.expect<ExecutionContextView>(
    200,
    'the execution context',
    'GET',
    `${PACK}pipelines/context/service_item/${item}/`,
    owner,
  );
  const earlier = context.runs.find((entry) => entry.run === 1);
  say(
    `  execution context: ${context.characters} of ${context.budget.characters} characters (the model's budget); run 1 in it:`,
  );
  for (const stage of earlier?.stages ?? [])
    if (stage.state !== null)
      say(`    ${stage.stage} ${stage.state}, ${stage.origin}: ${excerpt(stage.pack_data, 120)}`);
}

async function configOf(
  api: Api,
  owner: string,
  item: number,
  run: number,
  deadline: number,
): Promise<Config> {
  let config: Config | null = null;
  await until(deadline, `run ${run} CONFIG OK`, async () => {
    const answer = await api.call<PipelineView>(
      'GET',
      `${PACK}pipelines/latest/service_item/${item}/`,
      owner,
    );
    const stage = answer.status === 200 && answer.body.run === run ? answer.body.stages[0] : undefined;
    if (stage?.state === 'FAILED') throw new DemoError(`run ${run} CONFIG failed: ${stage.error}`);
    if (stage?.state === 'OK') config = stage.pack_data as unknown as Config;
    return config !== null;
  });
  return config!;
}

function changes(before: Config, after: Config): string[] {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])] as (keyof Config)[];
  return keys
    .filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]))
    .map((key) => `${key} ${JSON.stringify(before[key])} -> ${JSON.stringify(after[key])}`);
}

async function until(deadline: number, what: string, done: () => Promise<boolean>): Promise<void> {
  while (!(await done())) {
    if (Date.now() > deadline) throw new DemoError(`timed out waiting for ${what}`);
    await sleep(POLL_MS);
  }
}
