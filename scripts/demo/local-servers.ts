/** The two servers the demo runs beside the stack, both on loopback: an LLM provider and a webhook receiver. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import {
  byPrompt,
  chatCompletion,
  FakeProviderServer,
  openAiError,
  promptText,
  type RecordedRequest,
} from '@pack/testkit';

/** What each stage's processor prompt carries, so the fake provider knows which stage asks. */
export const STAGE_MARKERS = {
  config: '[demo stage: config]',
  verify: '[demo stage: verify]',
  execution: '[demo stage: execution]',
} as const;

/** The PackData each stage's model "writes": plausible output for the demo's declaration. */
export const STAGE_REPLIES: Record<keyof typeof STAGE_MARKERS, object> = {
  config: { vm: { flavor: 'c2.large', vcpus: 4, memory_gb: 16, region: 'eu-west-1' }, backup: 'daily' },
  verify: { checked: true, findings: [], quota_ok: true },
  execution: { delivered: true, hostname: 'vm-demo-01.internal', ticket: 'CHG-1042' },
};

/** The healing scene's processors (healing.ts). */
export const HEALING_MARKERS = {
  config: '[demo healing: config]',
  execution: '[demo healing: execution]',
} as const;

/**
 * The healing scene's model: its CONFIG asks for 500 GB of disk until its prompt holds that
 * earlier configuration and the simulation's error, then for 250 GB.
 */
const healing = byPrompt([
  {
    when: [HEALING_MARKERS.config, '"disk_gb":500', 'simulation: disk quota exceeded'],
    reply: '{"server":"web-1","disk_gb":250}',
  },
  { when: [HEALING_MARKERS.config], reply: '{"server":"web-1","disk_gb":500}' },
  { when: [HEALING_MARKERS.execution], reply: '{"delivered":true,"hostname":"web-1.internal"}' },
]);

function replyFor(req: RecordedRequest): string {
  const healed = healing(promptText(req), req);
  if (healed) return healed.text;
  const text = JSON.stringify(req.body ?? '');
  for (const [stage, marker] of Object.entries(STAGE_MARKERS)) {
    if (text.includes(marker)) return JSON.stringify(STAGE_REPLIES[stage as keyof typeof STAGE_MARKERS]);
  }
  return 'Hello from the demo provider.';
}

/**
 * An OpenAI chat-completions server that takes any key and answers each stage with its PackData
 * (12 input and 7 output tokens per call, as the testkit's fake reports them).
 */
export function startFakeProvider(): Promise<FakeProviderServer> {
  return new FakeProviderServer({
    route: (req) => (req.method === 'POST' && req.path === '/v1/chat/completions' ? 'generate' : undefined),
    success: (req) => chatCompletion(req, { text: replyFor(req) }),
    empty: (req) => chatCompletion(req, { text: '' }, null),
    error: openAiError,
  }).start();
}

export interface Delivery {
  at: Date;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver answering 200 to every POST, keeping what came in. */
export class WebhookReceiver {
  readonly deliveries: Delivery[] = [];
  private readonly server: http.Server;
  private listeners: ((delivery: Delivery) => void)[] = [];
  url = '';

  constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const delivery = {
          at: new Date(),
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        this.deliveries.push(delivery);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('received by the pack demo');
        for (const listener of this.listeners) listener(delivery);
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  onDelivery(listener: (delivery: Delivery) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const header = (delivery: Delivery, name: string) => String(delivery.headers[name] ?? '');

/**
 * Standard Webhooks, checked as a receiver would: the official `standardwebhooks` library (the
 * one the dispatcher signs with) verifies the signature of `id.timestamp.body` under the
 * webhook's `whsec_` secret, and that the timestamp is recent.
 */
export function signatureValid(delivery: Delivery, secret: string): boolean {
  try {
    new Webhook(secret).verify(delivery.body, {
      'webhook-id': header(delivery, 'webhook-id'),
      'webhook-timestamp': header(delivery, 'webhook-timestamp'),
      'webhook-signature': header(delivery, 'webhook-signature'),
    });
    return true;
  } catch {
    return false;
  }
}
