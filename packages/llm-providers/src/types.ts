import type { TokenCache } from './token-cache';
import type { Dispatcher } from 'undici';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface GenerateRequest {
  /** The provider's model name (model_name of the profile). */
  model: string;
  messages: ChatMessage[];
  maxOutputTokens?: number;
  /** Cancels the call; the adapter's own deadline applies as well. */
  signal?: AbortSignal;
  /**
   * A draft-07 style JSON Schema the reply must follow: sent natively or as instructions appended
   * to the final prompt (see STRUCTURED_CAPABILITY); the result's `mode` says which.
   */
  schema?: JsonSchema;
  /**
   * How the schema reaches the model: `instructions` always as text appended to the final
   * prompt; `native` (the default) as the protocol's structured parameter when the provider has
   * one (a model setting, `structured_output`, decides; a server that refuses it falls back).
   */
  schemaAs?: 'native' | 'instructions';
}

export type JsonSchema = Record<string, unknown>;

export type StructuredMode = 'native' | 'text';

/**
 * input_tokens is everything billed as input (cached and cache-write tokens included) and
 * output_tokens everything billed as output (reasoning included), so cost is one formula for every
 * provider. The provider's own usage object is kept in raw.
 */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens?: number;
  reasoning_tokens?: number;
  raw: unknown;
}

export interface GenerateResult {
  text: string;
  usage: Usage;
  latency_ms: number;
  /** Only when a schema was given: how it reached the model. */
  mode?: StructuredMode;
  /** Why a native-capable provider got the schema as text (e.g. a keyword Gemini lacks). */
  mode_reason?: string;
}

export interface LlmAdapter {
  generate(request: GenerateRequest): Promise<GenerateResult>;
}

export interface AdapterOptions {
  /** Seconds; bounds the whole call, including the wait for response headers. */
  timeout: number;
  /** Where connections are made (the SSRF guard plugs in here); undici's global one otherwise. */
  dispatcher?: Dispatcher;
  /** Used instead of a fresh certificate-ignoring Agent when genai's verify_ssl is false. */
  insecureDispatcher?: Dispatcher;
  /** Assistants runs: first poll interval in ms (grows to 1 s). */
  pollIntervalMs?: number;
  /** genai access tokens: the service's one cache; without it, this adapter's own. */
  tokenCache?: TokenCache;
}

export type ProviderConfig =
  | { provider: 'vendor1'; api_key: string; base_url: string | null }
  | {
      provider: 'vendor1_assistant';
      VENDOR1_API_KEY: string;
      VENDOR1_ASSISTANT_ID: string;
      base_url?: string | null;
    }
  | { provider: 'vendor2'; api_key: string; base_url: string | null }
  | { provider: 'vendor3'; api_key: string; base_url?: string | null }
  | {
      provider: 'genai';
      token_url: string;
      request_url: string;
      credentials: string;
      verify_ssl: boolean;
      request_payload?: Record<string, unknown>;
      /** How the token request's body is encoded: OAuth2's form (default) or JSON. */
      token_request_format?: 'form' | 'json';
    };

export type Provider = ProviderConfig['provider'];
