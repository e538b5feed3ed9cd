import { call, type CallResult } from '@pack/testkit';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Each consumer submits one declaration, one every `everyMs` (so that submissions span the
 * whole run); a refused one is sent again 1 s later. Returns the Service Items and the refusals
 * by status.
 */
export async function submitEvery(gateway: string, service: number, consumers: string[], everyMs: number) {
  const items: number[] = [];
  const refused = new Map<string, number>();
  await Promise.all(
    consumers.map(async (token, i) => {
      await sleep(i * everyMs);
      for (;;) {
        const answer = await call(gateway, 'POST', `/v1/catalog/services/${service}/declarations/`, {
          token,
          body: { declaration: { n: i } },
        }).catch((error: Error) => ({ status: 0, body: undefined, text: error.message }) as CallResult);
        if (answer.status === 201) {
          items[i] = (
            answer.body as { change_instance: { service_item: number } }
          ).change_instance.service_item;
          return;
        }
        refused.set(String(answer.status), (refused.get(String(answer.status)) ?? 0) + 1);
        await sleep(1000);
      }
    }),
  );
  return { items, refused };
}
