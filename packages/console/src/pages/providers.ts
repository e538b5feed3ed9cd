/** The connection settings each provider needs (spec 2.1's extra_data table), as form fields. */
import type { NewLlmModel, Provider } from '../api/types';

export interface ProviderField {
  key: string;
  label: string;
  kind: 'text' | 'url' | 'secret' | 'boolean' | 'json';
  required: boolean;
  hint?: string;
}

type ExtraKeys<P extends Provider> = keyof Extract<NewLlmModel, { provider: P }>['extra_data'] & string;
type Fields = { [P in Provider]: (ProviderField & { key: ExtraKeys<P> })[] };

const apiKey = { key: 'api_key', label: 'API key', kind: 'secret', required: true } as const;

export const PROVIDER_FIELDS: Fields = {
  vendor1: [
    apiKey,
    {
      key: 'base_url',
      label: 'Base URL',
      kind: 'url',
      required: false,
      hint: 'Chat Completions endpoint base, e.g. https://host/v1; empty: the provider default',
    },
  ],
  vendor1_assistant: [
    { key: 'VENDOR1_API_KEY', label: 'API key', kind: 'secret', required: true },
    { key: 'VENDOR1_ASSISTANT_ID', label: 'Assistant id', kind: 'text', required: true },
    { key: 'base_url', label: 'Base URL (empty: the provider default)', kind: 'url', required: false },
  ],
  vendor2: [
    apiKey,
    { key: 'base_url', label: 'Base URL', kind: 'url', required: false, hint: 'empty: the provider default' },
  ],
  vendor3: [
    apiKey,
    { key: 'base_url', label: 'Base URL (empty: the provider default)', kind: 'url', required: false },
  ],
  genai: [
    { key: 'token_url', label: 'Token URL', kind: 'url', required: true },
    { key: 'request_url', label: 'Request URL', kind: 'url', required: true },
    { key: 'credentials', label: 'Credentials (Authorization header value)', kind: 'secret', required: true },
    { key: 'verify_ssl', label: 'Verify TLS certificates', kind: 'boolean', required: true },
    { key: 'request_payload', label: 'Request payload (JSON object)', kind: 'json', required: true },
    {
      key: 'token_request_format',
      label: 'Token request encoding',
      kind: 'text',
      required: false,
      hint: 'form (OAuth2, the default when empty) or json for token servers that want JSON',
    },
  ],
};

export const PROVIDER_LABELS: Record<Provider, string> = {
  vendor1: 'vendor1 (Chat Completions)',
  vendor1_assistant: 'vendor1_assistant (Assistants v2)',
  vendor2: 'vendor2 (Messages)',
  vendor3: 'vendor3 (generateContent)',
  genai: 'genai (enterprise gateway)',
};

export const PROVIDERS = Object.keys(PROVIDER_FIELDS) as Provider[];

/** A masked secret as the API answers it (`********4711`): sending it back keeps the stored one. */
export const isMasked = (value: unknown) => typeof value === 'string' && value.startsWith('********');
