import { randomUUID } from 'node:crypto';
import { events, type EventData } from '@pack/contracts';
import {
  EventTap,
  publishEvent,
  seededSecret,
  waitFor,
  type FakeProviderServer,
  type TappedEvent,
} from '@pack/testkit';
import { admin, type LlmGatewayHarness } from './harness';

export type GenerateRequestData = EventData<typeof events.llmGenerateRequested>;
export const LOOPBACK = { PACK_ALLOWED_TARGET_CIDRS: '127.0.0.1/32,::1/128' };
export const KEY = seededSecret('the provider api_key', { prefix: 'sk-generate-SECRET-' });

/** Publishes generate requests as the pipeline would and reads the results off the exchange. */
export class Requester {
  private constructor(
    private readonly llm: LlmGatewayHarness,
    private readonly tap: EventTap,
  ) {}

  static async start(llm: LlmGatewayHarness): Promise<Requester> {
    const { AMQP_URL, BROKER_NAMESPACE } = llm.env;
    const tap = await EventTap.start(AMQP_URL!, BROKER_NAMESPACE!, [events.llmGenerateCompleted.type]);
    // The request queue exists once the consumer runs: before that a request would be unroutable.
    await waitFor(() => llm.service.context.broker.isReady(), { what: 'the broker' });
    return new Requester(llm, tap);
  }

  request(llmModelId: number, fields: Partial<GenerateRequestData> = {}): GenerateRequestData {
    return {
      request_id: randomUUID(),
      llm_model_id: llmModelId,
      messages: [{ role: 'user', content: 'Say hello.' }],
      response_schema: null,
      processor_id: null,
      reply_to: null,
      ...fields,
    };
  }

  async publish(data: GenerateRequestData): Promise<void> {
    const { AMQP_URL, BROKER_NAMESPACE } = this.llm.env;
    await publishEvent(AMQP_URL!, BROKER_NAMESPACE!, events.llmGenerateRequested, data);
  }

  /** Every result received for these request ids, once each has at least one. */
  async results(requestIds: readonly string[]): Promise<TappedEvent[]> {
    const wanted = new Set(requestIds);
    const idOf = (e: TappedEvent) => (e.data as { request_id: string }).request_id;
    const received = await this.tap.waitFor((all) => {
      const seen = new Set(all.map(idOf));
      return [...wanted].every((id) => seen.has(id));
    }, `results of ${wanted.size} requests`);
    return received.filter((e) => wanted.has(idOf(e)));
  }

  /** The result of one request (the first, when it was published more than once). */
  async resultOf(data: GenerateRequestData): Promise<Record<string, unknown>> {
    const [first] = await this.results([data.request_id]);
    return first!.data as Record<string, unknown>;
  }

  stop(): Promise<void> {
    return this.tap.stop();
  }
}

let counter = 0;
/** A vendor1 model at a fake OpenAI-shape server. */
export async function vendor1Model(
  llm: LlmGatewayHarness,
  fake: FakeProviderServer,
  fields: Record<string, unknown> = {},
): Promise<number> {
  counter += 1;
  const created = await llm.create(
    {
      name: `generator ${counter}`,
      provider: 'vendor1',
      model_name: 'gpt-4o-mini',
      timeout: 5,
      input_price_per_1m_tokens: '0.15',
      output_price_per_1m_tokens: '0.6',
      extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
      ...fields,
    },
    admin,
  );
  if (created.status !== 201) throw new Error(`creating a model answered ${created.status}`);
  return (created.body as { id: number }).id;
}

/** Generation requests the fake provider received. */
export const providerCalls = (fake: FakeProviderServer) =>
  fake.requests.filter((r) => r.method === 'POST' && /chat\/completions|messages/.test(r.path)).length;
