import type { Envelope, LlmProvider, Page, StructuredOutputMode } from '@pack/contracts';

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
   * Ordered ids of the models that answer a call this one cannot (issue 29, docs/decisions/0045);
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

/**
 * Everything the use cases need from storage; data/llm-model-repository.ts implements it. Every
 * change is written together with its event (one single-document write; the outbox relay
 * publishes it), and applies only to the version it was computed from, so two concurrent
 * changes never publish the same version.
 */
export interface LlmModelStore {
  /** A new integer id, unique across replicas. */
  nextId(): Promise<number>;
  /** ConflictError when the name is taken. */
  insert(record: LlmModelRecord, event: Envelope): Promise<void>;
  /** Deleted models are not found. */
  find(id: number): Promise<LlmModelRecord | null>;
  list(limit: number, offset: number): Promise<Page<LlmModelRecord>>;
  /** The model after the change (version + 1); ConflictError when the new name is taken. */
  update(
    id: number,
    version: number,
    set: Partial<LlmModelRecord>,
    event: Envelope,
  ): Promise<WriteOutcome<LlmModelRecord>>;
  /** Ids of live models other than `id` whose fallback_models name `id`, at most `limit`. */
  fallbackOf(id: number, limit: number): Promise<number[]>;
  /** Deletes (keeping a tombstone that holds the event until it is published). */
  remove(id: number, version: number, event: Envelope): Promise<WriteOutcome<true>>;
}

/** Encrypts and decrypts one secret of one model; both are bound into the ciphertext. */
export interface SecretCodec {
  seal(modelId: number, field: string, plaintext: string): string;
  /** The plaintext, or null when the stored value cannot be decrypted (its key is gone). */
  open(modelId: number, field: string, stored: string): string | null;
}
