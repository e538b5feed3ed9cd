import type { LlmProvider, Page, StructuredOutputMode } from '@pack/contracts';

/**
 * An LLM Model profile as stored. Secret extra_data keys hold ciphertext (bound to the model and
 * the key), genai's request_payload holds JSON text (DESIGN section 2: user JSON may use keys a
 * MongoDB-wire database refuses), prices are decimal strings or null (unpriced).
 */
export interface LlmModelRecord {
  _id: number;
  name: string;
  provider: LlmProvider;
  model_name: string;
  prompt: string;
  timeout: number;
  /** The reply's output budget in tokens; absent in models stored before it was kept (DEFAULT_MAX_OUTPUT_TOKENS). */
  max_output_tokens?: number;
  /** How a response schema reaches the model; absent in models stored before it: the provider's default. */
  structured_output?: StructuredOutputMode;
  input_price_per_1m_tokens: string | null;
  output_price_per_1m_tokens: string | null;
  extra_data: Record<string, unknown>;
  /**
   * Ordered ids of the models that answer a call this one cannot (docs/decisions/0045);
   * absent in models stored before fallbacks existed (none).
   */
  fallback_models?: number[];
  /** Grows by one with every change; the model events carry it (llm.model.changed.v1). */
  version: number;
  created_at: Date;
  updated_at: Date;
}

export type { Page };

/** What a conditional write found: done, the model gone, or another change got there first. */
export type WriteOutcome<T> = { done: T } | 'gone' | 'stale';

/** Encrypts and decrypts one secret of one model; both are bound into the ciphertext. */
export interface SecretCodec {
  seal(modelId: number, field: string, plaintext: string): string;
  /** The plaintext, or null when the stored value cannot be decrypted (its key is gone). */
  open(modelId: number, field: string, stored: string): string | null;
}
