import { JSON_SCHEMA_DRAFT_07, type JsonSchema } from '@pack/contracts';

/**
 * The schemas this service owns and no processor can override (spec 2.4, DESIGN section 7,
 * docs/decisions/0023).
 */

/** What a Change Instance Validator answers; its decision is published as validation_decided. */
export const VALIDATOR_SCHEMA: JsonSchema = {
  $schema: JSON_SCHEMA_DRAFT_07,
  title: 'Change Instance Validator decision',
  type: 'object',
  required: ['decision', 'reasons'],
  additionalProperties: false,
  properties: {
    decision: { type: 'string', enum: ['approve', 'reject'] },
    reasons: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 2000 }, maxItems: 50 },
  },
};

/**
 * What a Universal Executor answers: whether it succeeded, a summary, the steps it took and a
 * free JSON object of results (stored as the stage's PackData), so automation can always read
 * the outcome the same way whatever the processor's prompt.
 */
export const UNIVERSAL_EXECUTOR_SCHEMA: JsonSchema = {
  $schema: JSON_SCHEMA_DRAFT_07,
  title: 'Universal Executor result',
  type: 'object',
  required: ['status', 'summary', 'steps', 'output'],
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: ['ok', 'failed'] },
    summary: { type: 'string', maxLength: 10_000 },
    steps: {
      type: 'array',
      maxItems: 200,
      items: {
        type: 'object',
        required: ['name', 'status'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 200 },
          status: { type: 'string', enum: ['ok', 'failed', 'skipped'] },
          detail: { type: 'string', maxLength: 10_000 },
        },
      },
    },
    output: { type: 'object' },
  },
};
