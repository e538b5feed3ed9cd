/** Records of each kind a backup must carry, made and read back through the gateway (packctl.test.ts). */
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { waitFor } from '@pack/testkit';
import { modelOnFakeProvider, type Stack } from '../stack';

export const SERVICES = [
  'gateway',
  'catalog',
  'settings',
  'llm-gateway',
  'pipeline-orchestrator',
  'webhook-dispatcher',
];

/** `--db service=name` for each service, naming the database it uses in `stack` (or `names`). */
export function databaseArgs(stack: Stack, names?: Record<string, string>): string[] {
  return SERVICES.flatMap((service) => [
    '--db',
    `${service}=${names?.[service] ?? (stack.service(service).context.config as { MONGO_DB: string }).MONGO_DB}`,
  ]);
}

export interface Receiver {
  url: string;
  received: { headers: http.IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
}

/** A webhook target on loopback that answers 200 and keeps every request. */
export async function startReceiver(): Promise<Receiver> {
  const received: Receiver['received'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.end('thanks');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface Records {
  owner: string;
  model: number;
  service: number;
  webhook: number;
  secret: string;
  instance: number;
}

/** A model with an api_key, an owner's Service with a webhook (and its secret), a consumer's declaration. */
export async function makeRecords(stack: Stack, provider: { url: string; apiKey: string }, target: string) {
  const owner = await stack.issueToken('service_owner');
  const consumer = await stack.issueToken('consumer');
  const model = await modelOnFakeProvider(stack, 'Backed-up model', provider.url, provider.apiKey);
  const service = await stack.call('POST', '/v1/catalog/services/', {
    token: owner,
    body: { name: 'Backed-up service', description: 'kept across a restore' },
  });
  // The dispatcher accepts a webhook once the catalog's event about the Service reached it.
  const webhook = await waitFor(async () => {
    const reply = await stack.call('POST', '/v1/external/serviceowner/webhooks/', {
      token: owner,
      body: { name: 'Backed-up hook', service: service.body.id, target_url: target },
    });
    return reply.status === 201 ? reply.body : undefined;
  });
  const submitted = await stack.call('POST', `/v1/catalog/services/${service.body.id}/declarations/`, {
    token: consumer,
    body: { declaration: { size: 'small', region: 'north' } },
  });
  if (submitted.status !== 201) throw new Error(`the declaration answered ${submitted.status}`);
  const records: Records = {
    owner,
    model,
    service: service.body.id as number,
    webhook: webhook.id as number,
    secret: webhook.secret as string,
    instance: submitted.body.change_instance.id as number,
  };
  return records;
}

/** What a user reads of the records: the owner's token must still work for every read. */
export async function readRecords(stack: Stack, records: Records) {
  const asOwner = async (path: string) => {
    const reply = await stack.call('GET', path, { token: records.owner });
    return { status: reply.status, body: reply.body as unknown };
  };
  const model = await stack.call('GET', `/v1/ai/llm_models/${records.model}/`);
  return {
    model: { status: model.status, body: model.body as unknown },
    service: await asOwner(`/v1/catalog/services/${records.service}/`),
    webhook: await asOwner(`/v1/external/serviceowner/webhooks/${records.webhook}/`),
    instance: await asOwner(`/v1/catalog/change_instances/${records.instance}/`),
  };
}

/** The backup's manifest.json, as a test reads it. */
export async function backupManifest(dir: string) {
  return JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')) as {
    databases: { service: string; collections: { name: string; count: number; indexes: unknown[] }[] }[];
  };
}

/** Whether a received webhook request carries a valid Standard Webhooks signature by `secret`. */
export function signedWith(request: Receiver['received'][number], secret: string): boolean {
  const headers = Object.fromEntries(
    ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [
      name,
      String(request.headers[name]),
    ]),
  );
  try {
    new Webhook(secret).verify(request.body, headers);
    return true;
  } catch {
    return false;
  }
}
