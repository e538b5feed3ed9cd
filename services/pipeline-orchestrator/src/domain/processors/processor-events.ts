import { randomUUID } from 'node:crypto';
import { createEnvelope, events, type Envelope, type ProcessorSnapshot } from '@pack/contracts';
import { currentContext } from '@pack/logging';
import type { ProcessorRecord } from '../records/processor-records';

import { SOURCE } from '../records/source';

export type ProcessorChange = 'created' | 'updated' | 'activated' | 'deleted';

const DEFINITIONS = {
  created: events.processorCreated,
  updated: events.processorUpdated,
  activated: events.processorActivated,
  deleted: events.processorDeleted,
} as const;

function snapshot(record: ProcessorRecord): ProcessorSnapshot {
  return {
    processor_id: record._id,
    service_id: record.service_id,
    kind: record.kind,
    llm_model_id: record.llm_model_id,
    active: record.active,
    deleted: record.deleted,
    version: record.version,
  };
}

/** The processor's whole snapshot as it is after `change` (`record` is that state). */
export function processorEvent(change: ProcessorChange, record: ProcessorRecord): Envelope {
  return createEnvelope(DEFINITIONS[change], snapshot(record), {
    source: SOURCE,
    correlationId: currentContext()?.correlationId ?? randomUUID(),
    time: record.updated_at,
  });
}
