import { loadConfig } from '@pack/config';
import type { Principal } from '@pack/contracts';
import { startService, type RunningService } from '@pack/runtime';
import {
  admin,
  FakeSettings,
  noCompanions,
  seededSecret,
  seedSecret,
  startHarness,
  waitFor,
  type CallResult,
  type Companions,
  type Harness,
  type HarnessOptions,
  type ServiceKind,
} from '@pack/testkit';
import { llmGatewayEnvSchema, llmGatewayService, type LlmGatewayConfig } from '../src/service';

export const MODELS = '/v1/ai/llm_models/';
export { admin, consumer, otherOwner, owner } from '@pack/testkit';

/** One valid model per provider, with secrets long enough that an admin sees their last four characters. */
export const examples = {
  vendor1: {
    name: 'Chat model',
    provider: 'vendor1',
    model_name: 'gpt-4o-mini',
    prompt: 'You are a careful infrastructure assistant.',
    timeout: 30,
    input_price_per_1m_tokens: '0.15',
    output_price_per_1m_tokens: 0.6,
    extra_data: {
      api_key: seededSecret('vendor1 api_key', { prefix: 'sk-vendor1-PLAINTEXT-', suffix: '1111' }),
      base_url: 'https://api.example.com/v1',
    },
  },
  vendor1_assistant: {
    name: 'Assistant model',
    provider: 'vendor1_assistant',
    model_name: 'gpt-4o',
    prompt: '',
    input_price_per_1m_tokens: '2.5',
    output_price_per_1m_tokens: '10',
    extra_data: {
      VENDOR1_API_KEY: seededSecret('assistant key', { prefix: 'sk-assistant-PLAINTEXT-', suffix: '2222' }),
      VENDOR1_ASSISTANT_ID: 'asst_abc123',
    },
  },
  vendor2: {
    name: 'Messages model',
    provider: 'vendor2',
    model_name: 'claude-sonnet',
    prompt: 'Answer briefly.',
    input_price_per_1m_tokens: 3,
    output_price_per_1m_tokens: 15,
    extra_data: {
      api_key: seededSecret('vendor2 api_key', { prefix: 'sk-vendor2-PLAINTEXT-', suffix: '3333' }),
      base_url: 'https://messages.example.com/',
    },
  },
  vendor3: {
    name: 'Gemini model',
    provider: 'vendor3',
    model_name: 'gemini-flash',
    prompt: 'Answer briefly.',
    input_price_per_1m_tokens: '0.075',
    output_price_per_1m_tokens: '0.3',
    extra_data: {
      api_key: seededSecret('vendor3 api_key', { prefix: 'key-vendor3-PLAINTEXT-', suffix: '4444' }),
      base_url: null,
    },
  },
  genai: {
    name: 'Enterprise gateway',
    provider: 'genai',
    model_name: 'corp-llm',
    prompt: 'Follow the corporate policy.',
    timeout: 120,
    extra_data: {
      token_url: 'https://auth.example.com/oauth/token',
      request_url: 'https://llm.example.com/v1/chat',
      credentials: `Basic ${seedSecret('genai credentials', 'Z2VuYWktUExBSU5URVhULTU1NTU=')}`,
      verify_ssl: false,
      request_payload: { temperature: 0.2, $schema: 'x', 'a.b': [[1]] },
    },
  },
} as const;

interface LlmGatewayHelpers {
  create(body: unknown, principal?: Principal): Promise<CallResult>;
  read(id: number, principal?: Principal): Promise<CallResult>;
  patch(id: number, body: unknown, principal?: Principal): Promise<CallResult>;
  /** Every stored live LLM model document, as the database holds it. */
  storedModels(): Promise<Record<string, unknown>[]>;
  /** Live models and the tombstones of deleted ones (kept until their deletion is published). */
  allStoredModels(): Promise<Record<string, unknown>[]>;
}

type Running = RunningService<LlmGatewayConfig>;

/** The llm-gateway service in this process, on its own database and broker namespace. */
export const llmGatewayKind: ServiceKind<Running, Companions, LlmGatewayHelpers, HarnessOptions> = {
  name: 'llm-gateway',
  // The settings: a fake answering the defaults (the llm-gateway acts on nothing before it read them).
  async companions({ env = {} }) {
    if (env.SETTINGS_URL) return noCompanions;
    const settings = await new FakeSettings().start();
    return { env: { SETTINGS_URL: settings.url }, close: () => settings.stop() };
  },
  start: (env, options) => startService(llmGatewayService, loadConfig(llmGatewayEnvSchema, env), options),
  // Consumers' queues are bound once the broker is ready: an event published earlier is lost.
  ready: (service) => waitFor(() => service.context.broker.isReady(), { what: 'the llm-gateway broker' }),
  extend: (llm) => {
    const allStoredModels = async () => (await llm.rawDatabase()).llm_models ?? [];
    return {
      create: (body, principal = admin) => llm.as(principal, 'POST', MODELS, body),
      read: (id, principal = admin) => llm.as(principal, 'GET', `${MODELS}${id}/`),
      patch: (id, body, principal = admin) => llm.as(principal, 'PATCH', `${MODELS}${id}/`, body),
      storedModels: async () => (await allStoredModels()).filter((model) => model.deleted !== true),
      allStoredModels,
    };
  },
};

export type LlmGatewayHarness = Harness<Running, Companions, LlmGatewayHelpers, HarnessOptions>;

export const startLlmGateway = (options: HarnessOptions = {}): Promise<LlmGatewayHarness> =>
  startHarness(llmGatewayKind, options);
