import { randomUUID } from 'node:crypto';
import { createEnvelope, events, type Envelope } from '@pack/contracts';
import { currentContext } from '@pack/logging';
import type { LlmModelRecord } from './model';

export const EVENT_SOURCE = 'llm-gateway';

/** `llm.model.changed.v1` for a model at `version` (the version the write being made produces). */
export function modelChangedEvent(
  record: Pick<LlmModelRecord, '_id' | 'name' | 'provider' | 'model_name' | 'timeout' | 'fallback_models'>,
  version: number,
  deleted: boolean,
): Envelope {
  return createEnvelope(
    events.llmModelChanged,
    {
      llm_model_id: record._id,
      name: record.name,
      provider: record.provider,
      model_name: record.model_name,
      timeout: record.timeout,
      fallback_models: deleted ? [] : (record.fallback_models ?? []),
      deleted,
      version,
    },
    { source: EVENT_SOURCE, correlationId: currentContext()?.correlationId ?? randomUUID() },
  );
}
