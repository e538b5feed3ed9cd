import {
  startFakeAnthropic,
  startFakeAssistants,
  startFakeGemini,
  startFakeGenai,
  startFakeOpenAi,
  type FakeProviderServer,
} from '@pack/testkit';
import { createAdapter, TokenCache, type AdapterOptions, type LlmAdapter, type Provider } from '../src';

export const KEY = 'sk-test-0123456789abcdefSECRET';
export const CREDENTIALS = 'Basic dXNlcjpzM2NyZXQtcGFzc3dvcmQtZm9yLXRlc3Rz';

export interface Setup {
  fake: FakeProviderServer;
  adapter: (options?: Partial<AdapterOptions>) => LlmAdapter;
  /** Makes the next generation come back without text, in the protocol's own way. */
  emptyNext: () => void;
}

/** A provider with one api_key; its fake answers at `${url}${path}`. */
async function keyed(
  provider: 'vendor1' | 'vendor2' | 'vendor3',
  start: (o: { apiKey: string }) => Promise<FakeProviderServer>,
  path = '',
): Promise<Setup> {
  const fake = await start({ apiKey: KEY });
  return {
    fake,
    adapter: (o) =>
      createAdapter({ provider, api_key: KEY, base_url: `${fake.url}${path}` }, { timeout: 5, ...o }),
    emptyNext: () => fake.next({ fault: { kind: 'empty' } }),
  };
}

/** A fake server of the provider's protocol and adapters pointed at it with the right secret. */
export const setups: Record<Provider, () => Promise<Setup>> = {
  vendor1: () => keyed('vendor1', startFakeOpenAi, '/v1'),
  vendor2: () => keyed('vendor2', startFakeAnthropic),
  vendor3: () => keyed('vendor3', startFakeGemini),
  genai: async () => {
    const fake = await startFakeGenai({ credentials: CREDENTIALS });
    const cache = new TokenCache();
    const config = {
      provider: 'genai' as const,
      token_url: fake.tokenUrl,
      request_url: fake.requestUrl,
      credentials: CREDENTIALS,
      verify_ssl: true,
      request_payload: { temperature: 0 },
    };
    return {
      fake,
      adapter: (o) => createAdapter(config, { timeout: 5, ...o }, cache),
      emptyNext: () => fake.next({ fault: { kind: 'empty' } }),
    };
  },
  vendor1_assistant: async () => {
    const fake = await startFakeAssistants({ apiKey: KEY, assistantId: 'asst_fake' });
    const config = {
      provider: 'vendor1_assistant' as const,
      VENDOR1_API_KEY: KEY,
      VENDOR1_ASSISTANT_ID: 'asst_fake',
      base_url: `${fake.url}/v1`,
    };
    return {
      fake,
      adapter: (o) => createAdapter(config, { timeout: 5, pollIntervalMs: 5, ...o }),
      emptyNext: () => {
        fake.reply = { text: '' };
      },
    };
  },
};

export const PROVIDERS = Object.keys(setups) as Provider[];

export const HELLO = [
  { role: 'system' as const, content: 'Answer briefly.' },
  { role: 'user' as const, content: 'Say hello.' },
];
