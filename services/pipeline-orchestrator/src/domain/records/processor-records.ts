import type { ProcessorKind } from '@pack/contracts';

export type { Page } from '@pack/contracts';

/**
 * An AI processor as stored. The response schema is user JSON, kept as text (DESIGN section 2);
 * a deleted processor stays as a tombstone (`deleted`) so its last event version is never reused.
 * `version` grows with every change and goes out in the processor's events.
 */
export interface ProcessorRecord {
  _id: number;
  name: string;
  service_id: number;
  kind: ProcessorKind;
  llm_model_id: number;
  prompt: string;
  response_schema_json: string | null;
  generative_ui: boolean;
  active: boolean;
  deleted: boolean;
  version: number;
  created_at: Date;
  updated_at: Date;
}

export interface ProcessorFilter {
  /** Only processors of these Services (a service owner's); absent: every Service. */
  service_ids?: readonly number[];
  service_id?: number;
  kind?: ProcessorKind;
}

/** Who holds the active slot of a Service and kind, since when. */
export interface SlotHolder {
  processor_id: number;
  since: Date;
}

/** A Service as the catalog's `catalog.service.changed.v1` events describe it. */
export interface KnownService {
  service_id: number;
  name: string;
  owner_id: number;
  owner_name: string;
  deleted: boolean;
}

/** Where the active processor of a Service and kind is found (stage-processors.ts, processor-cache.ts). */
export interface ActiveProcessors {
  /** The active processor of a Service for a kind, or null. */
  active(serviceId: number, kind: ProcessorKind): Promise<ProcessorRecord | null>;
}
