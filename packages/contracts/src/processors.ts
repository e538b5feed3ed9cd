import { z } from 'zod';
import { processorKindSchema, type ProcessorKind } from './snapshots';
import { jsonSchemaProblems } from './settings';
import { jsonBytes, nonBlankText, storedText } from './text';

/** AI Processors (spec 2.3, 2.4; DESIGN section 7): the API of `/v1/ai/processors/`. */

/** A response schema is user JSON stored as text; this bounds what one processor may hold. */
export const RESPONSE_SCHEMA_MAX_BYTES = 64 * 1024;

/**
 * What becomes of a processor's own response schema, by kind (spec 2.4 "Restrictions by
 * processor kind"): refused on a validator, kept but not sent for the optimizer (free-form
 * notes), ignored for the universal executor (its managed schema wins), used by stage processors.
 */
export const RESPONSE_SCHEMA_USE = {
  config: 'used',
  verify: 'used',
  execution: 'used',
  change_instance_validator: 'refused',
  pack_optimizer: 'not_used',
  universal_executor: 'ignored',
} as const satisfies Record<ProcessorKind, 'used' | 'refused' | 'not_used' | 'ignored'>;

export const RESPONSE_SCHEMA_REFUSED =
  'a Change Instance Validator answers with the internal {decision, reasons} format; a custom response schema is not allowed';

/** Why a stored schema is not sent, for the response's `response_schema_note`; null when it is. */
export function responseSchemaNote(kind: ProcessorKind, hasSchema: boolean): string | null {
  if (!hasSchema) return null;
  switch (RESPONSE_SCHEMA_USE[kind]) {
    case 'not_used':
      return 'stored but not used: a Pack Optimizer answers with free-form notes';
    case 'ignored':
      return "ignored: a Universal Executor always answers with the service's internal managed schema";
    case 'refused':
    case 'used':
      return null;
  }
}

const responseSchema = z
  .record(z.string(), z.unknown())
  .nullable()
  .superRefine((value, ctx) => {
    if (value === null) return;
    if (jsonBytes(value) > RESPONSE_SCHEMA_MAX_BYTES)
      ctx.addIssue({ code: 'custom', message: `must be at most ${RESPONSE_SCHEMA_MAX_BYTES} bytes of JSON` });
    else
      for (const problem of jsonSchemaProblems(value))
        ctx.addIssue({ code: 'custom', message: `is not a valid draft-07 JSON Schema: ${problem}` });
  })
  .describe('A draft-07 JSON Schema of the output, or null');

const name = nonBlankText(200);
const prompt = storedText().max(100_000);
const id = z.number().int().positive();

const fields = {
  name,
  service: id.describe('The Service the processor belongs to'),
  kind: processorKindSchema,
  llm_model: id.describe('The LLM Model it calls'),
  prompt: prompt.default(''),
  response_schema: responseSchema.default(null),
  generative_ui: z.boolean().default(false),
  active: z.boolean().default(false).describe('At most one active processor per Service and kind'),
};

/** Body of `POST /v1/ai/processors/`. */
export const processorCreateSchema = z.strictObject(fields).superRefine((body, ctx) => {
  if (body.response_schema !== null && RESPONSE_SCHEMA_USE[body.kind] === 'refused')
    ctx.addIssue({ code: 'custom', path: ['response_schema'], message: RESPONSE_SCHEMA_REFUSED });
});
export type ProcessorCreate = z.infer<typeof processorCreateSchema>;

/**
 * Body of `PATCH /v1/ai/processors/<id>/`: any subset of fields except `service` (a processor
 * stays with its Service; create one for another Service instead).
 */
export const processorPatchSchema = z.strictObject({
  name: name.optional(),
  kind: processorKindSchema.optional(),
  llm_model: fields.llm_model.optional(),
  prompt: prompt.optional(),
  response_schema: responseSchema.optional(),
  generative_ui: z.boolean().optional(),
  active: z.boolean().optional(),
});
export type ProcessorPatch = z.infer<typeof processorPatchSchema>;

export const processorViewSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  service: z.number().int(),
  kind: processorKindSchema,
  llm_model: z.number().int(),
  prompt: z.string(),
  response_schema: z.record(z.string(), z.unknown()).nullable(),
  response_schema_note: z
    .string()
    .nullable()
    .describe('Why a stored response schema is not sent to the model for this kind; null when it is'),
  generative_ui: z.boolean(),
  active: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ProcessorView = z.infer<typeof processorViewSchema>;
