import type { LlmProvider } from '@pack/contracts';

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
  input_price_per_1m_tokens: string | null;
  output_price_per_1m_tokens: string | null;
  extra_data: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

export interface Page<T> {
  count: number;
  items: T[];
}

/** Everything the use cases need from storage; data/llm-model-repository.ts implements it. */
export interface LlmModelStore {
  /** A new integer id, unique across replicas. */
  nextId(): Promise<number>;
  /** ConflictError when the name is taken. */
  insert(record: LlmModelRecord): Promise<void>;
  find(id: number): Promise<LlmModelRecord | null>;
  list(limit: number, offset: number): Promise<Page<LlmModelRecord>>;
  /** The model after the change; null when it is gone; ConflictError when the new name is taken. */
  update(id: number, set: Partial<LlmModelRecord>): Promise<LlmModelRecord | null>;
  /** False when there was no such model. */
  remove(id: number): Promise<boolean>;
}

/** Encrypts and decrypts one secret of one model; both are bound into the ciphertext. */
export interface SecretCodec {
  seal(modelId: number, field: string, plaintext: string): string;
  /** The plaintext, or null when the stored value cannot be decrypted (its key is gone). */
  open(modelId: number, field: string, stored: string): string | null;
}
