import { submitDeclaration } from '../crash-scenario/scenario';

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
      items[i] = await submitDeclaration(gateway, service, token, i, refused);
    }),
  );
  return { items, refused };
}
