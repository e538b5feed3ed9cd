import { waitFor, type CallResult } from '@pack/testkit';
import type { Stack } from './stack';

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
