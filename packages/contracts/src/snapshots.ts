import { z } from 'zod';

/*
 * Versioned snapshots: what one service keeps a projection of from another's events. Each event
 * carries the whole object; `version` grows with every change and `deleted` is a tombstone, so
 * a projection applies only a newer snapshot (packages/db applyVersionedSnapshot).
 */

export const PROCESSOR_KINDS = [
  'config',
  'verify',
  'execution',
  'change_instance_validator',
  'pack_optimizer',
  'universal_executor',
] as const;
export const processorKindSchema = z.enum(PROCESSOR_KINDS);
export type ProcessorKind = z.infer<typeof processorKindSchema>;

/**
 * An AI processor as other services need to know it, whole in every processor event so that a
 * consumer keeps a projection without calling the orchestrator back. `version` grows with every
 * change of the processor, so a late or redelivered event never overwrites a newer one;
 * `deleted` is a tombstone (a late `updated` cannot bring a deleted processor back).
 */
export const processorSnapshot = z.object({
  processor_id: z.number().int(),
  service_id: z.number().int(),
  kind: processorKindSchema,
  llm_model_id: z.number().int(),
  active: z.boolean(),
  deleted: z.boolean(),
  version: z.number().int().min(1),
});
export type ProcessorSnapshot = z.infer<typeof processorSnapshot>;

/**
 * An LLM model as other services need to know it (the orchestrator checks that a processor's
 * model exists and reads its timeout for the stage sweeper), whole in every event; `version`
 * grows with every change and `deleted` is a tombstone, as for processors.
 */
export const llmModelSnapshot = z.object({
  llm_model_id: z.number().int(),
  name: z.string(),
  provider: z.string(),
  model_name: z.string(),
  /** Seconds per provider attempt (1..600, not necessarily whole). */
  timeout: z.number().positive(),
  /** The ordered fallbacks: the stuck-stage deadline covers their calls too. Absent before they existed. */
  fallback_models: z.array(z.number().int()).optional(),
  deleted: z.boolean(),
  version: z.number().int().min(1),
});
export type LlmModelSnapshot = z.infer<typeof llmModelSnapshot>;

/**
 * A Service as other services need to know it (the orchestrator checks that a processor's
 * Service exists and who owns it), whole in every event: `version` grows with every change of
 * the Service and `deleted` is a tombstone, so a projection applies the newest snapshot only.
 */
export const serviceSnapshot = z.object({
  service_id: z.number().int(),
  name: z.string(),
  owner: z.object({ id: z.number().int(), name: z.string() }),
  deleted: z.boolean(),
  version: z.number().int().min(1),
});
export type ServiceSnapshot = z.infer<typeof serviceSnapshot>;

/**
 * A Service snapshot as a projection stores it (the webhook-dispatcher's and the orchestrator's
 * `services` collections): keyed by the Service's id, the owner flattened so it can be indexed.
 */
export interface ServiceProjection {
  _id: number;
  name: string;
  owner_id: number;
  owner_name: string;
  deleted: boolean;
  version: number;
}

export function serviceProjectionOf(snapshot: ServiceSnapshot): ServiceProjection {
  return {
    _id: snapshot.service_id,
    name: snapshot.name,
    owner_id: snapshot.owner.id,
    owner_name: snapshot.owner.name,
    deleted: snapshot.deleted,
    version: snapshot.version,
  };
}
