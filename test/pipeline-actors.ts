import { waitFor, type CallResult, type RecordedRequest } from '@pack/testkit';
import { modelKnownToOrchestrator, modelOnFakeProvider, type Stack } from './stack';

/** A Service Owner and a consumer driving pipelines through the gateway. */
export function pipelineActors(stack: Stack, ownerToken: string, consumerToken: string) {
  const asOwner = (method: string, path: string, body?: unknown): Promise<CallResult> =>
    stack.call(method, path, { token: ownerToken, ...(body === undefined ? {} : { body }) });

  /** A Service of the owner with active processors of `kinds`, on `model`. */
  async function serviceWith(name: string, model: number, kinds: string[]): Promise<number> {
    const service = await asOwner('POST', '/v1/catalog/services/', { name });
    if (service.status !== 201) throw new Error(`creating the Service answered ${service.status}`);
    for (const kind of kinds) {
      const body = {
        name: `${name} ${kind}`,
        service: service.body.id,
        kind,
        llm_model: model,
        prompt: `Do ${kind}.`,
        active: true,
      };
      // The catalog's Service event reaches the orchestrator asynchronously: 400 until then.
      await waitFor(async () => (await asOwner('POST', '/v1/ai/processors/', body)).status === 201, {
        what: `the ${kind} processor`,
      });
    }
    return service.body.id as number;
  }

  /** A consumer's declaration, approved by the owner: the change instance and Service Item ids. */
  async function approved(service: number, declaration: object): Promise<{ instance: number; item: number }> {
    const submitted = await stack.call('POST', `/v1/catalog/services/${service}/declarations/`, {
      token: consumerToken,
      body: { declaration },
    });
    if (submitted.status !== 201) throw new Error(`the submission answered ${submitted.status}`);
    const instance = submitted.body.change_instance;
    const approval = await asOwner('PATCH', `/v1/catalog/change_instances/${instance.id}/`, {
      state: 'APPROVED',
    });
    if (approval.status !== 200) throw new Error(`the approval answered ${approval.status}`);
    return { instance: instance.id as number, item: instance.service_item as number };
  }

  return { asOwner, serviceWith, approved };
}

/** A stage of a pipeline as the API answers it. */
export interface StageView {
  stage: string;
  state: string | null;
  error: string | null;
  started_at: string;
  finished_at: string;
}

/** (Service Item, kind) of a provider call: the processor prompt is `Do <kind>.`, the user message names the item. */
export function callKey(request: RecordedRequest): string {
  const messages = (request.body as { messages: { role: string; content: string }[] }).messages;
  const kind = /^Do (\w+)\./.exec(messages.find((m) => m.role === 'system')!.content)![1];
  const item = /Service Item (\d+)/.exec(messages.find((m) => m.role === 'user')!.content)![1];
  return `${item}/${kind}`;
}

/**
 * As the admin, `n` Service Items of `service` (one per consumer, whose tokens are issued into
 * `consumers` as needed), each with an approved declaration `{n: i}`: their pipelines start at once.
 * One after another, or all at the same time with `together` (their pipelines then overlap
 * however slow the machine is).
 */
export async function approvedItems(
  stack: Stack,
  consumers: string[],
  service: number,
  n: number,
  { together = false } = {},
): Promise<number[]> {
  while (consumers.length < n) consumers.push(await stack.issueToken('consumer'));
  const items: number[] = [];
  const approveOne = async (i: number) => {
    const submitted = await stack.call('POST', `/v1/catalog/services/${service}/declarations/`, {
      token: consumers[i],
      body: { declaration: { n: i } },
    });
    const instance = submitted.body.change_instance;
    const approved = await stack.call('PATCH', `/v1/catalog/change_instances/${instance.id}/`, {
      body: { state: 'APPROVED' },
    });
    if (approved.status !== 200)
      throw new Error(`approving change instance ${instance.id} answered ${approved.status}`);
    items[i] = instance.service_item as number;
  };
  if (together) await Promise.all(Array.from({ length: n }, (_, i) => approveOne(i)));
  else for (let i = 0; i < n; i++) await approveOne(i);
  return items;
}

/** The stages of the Service Item's latest pipeline; [] before it has one. */
export async function latestStages(stack: Stack, item: number): Promise<StageView[]> {
  const latest = await stack.call(
    'GET',
    `/v1/external/serviceowner/pack/pipelines/latest/service_item/${item}/`,
  );
  return (latest.body?.stages as StageView[]) ?? [];
}

/**
 * A model on the fake provider at `providerUrl` that gives up after `timeoutSeconds`, priced 1
 * and 2 per million tokens (input, output), once the orchestrator knows it: its id.
 */
export async function slowPricedModel(
  stack: Stack,
  name: string,
  providerUrl: string,
  apiKey: string,
  timeoutSeconds = 1,
): Promise<number> {
  const model = await modelOnFakeProvider(stack, name, providerUrl, apiKey, {
    timeout: timeoutSeconds,
    input_price_per_1m_tokens: '1',
    output_price_per_1m_tokens: '2',
  });
  await modelKnownToOrchestrator(stack, model);
  return model;
}
