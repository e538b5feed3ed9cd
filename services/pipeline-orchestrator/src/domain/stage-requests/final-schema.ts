import { JSON_SCHEMA_DRAFT_07, type JsonSchema, type ProcessorKind } from '@pack/contracts';
import { UNIVERSAL_EXECUTOR_SCHEMA, VALIDATOR_SCHEMA } from './internal-schemas';

/** What the model is asked to answer with (spec 2.4 "Final schema sent to the LLM"). */
export type FinalSchema =
  /** No schema: free-form text (neither option set, or a Pack Optimizer's notes). */
  | { mode: 'none' }
  /** The processor's response schema alone. */
  | { mode: 'custom'; schema: JsonSchema }
  /** Generative UI, LLM-defined: the catalog schema in force. */
  | { mode: 'gen_ui_catalog'; schema: JsonSchema }
  /** Generative UI, deterministic: the processor's own UI schema replaces the catalog. */
  | { mode: 'gen_ui_deterministic'; schema: JsonSchema }
  /** Both: `{data, gen_ui}`, data per the response schema (the PackData), gen_ui per the catalog. */
  | { mode: 'combined'; schema: JsonSchema }
  /** The Universal Executor's managed schema; any schema on the processor is ignored. */
  | { mode: 'universal_executor'; schema: JsonSchema }
  /** The validator's internal `{decision, reasons}`. */
  | { mode: 'validator'; schema: JsonSchema };

export interface SchemaInputs {
  kind: ProcessorKind;
  response_schema: JsonSchema | null;
  generative_ui: boolean;
  /** The Generative UI Catalog Schema in force (the setting, or the registry's default). */
  catalog_schema: JsonSchema;
}

/**
 * One rule for every row of spec 2.4's table. A response schema set together with generative UI
 * is a deterministic UI schema when it describes the UI itself (a top-level `components`
 * property, the catalog's shape: spec 2.4 rule 3), and the data half of the combined mode
 * otherwise (docs/decisions/0023).
 */
export function finalSchema(inputs: SchemaInputs): FinalSchema {
  switch (inputs.kind) {
    case 'change_instance_validator':
      return { mode: 'validator', schema: VALIDATOR_SCHEMA };
    case 'universal_executor':
      return { mode: 'universal_executor', schema: UNIVERSAL_EXECUTOR_SCHEMA };
    case 'pack_optimizer':
      return { mode: 'none' };
    case 'config':
    case 'verify':
    case 'execution':
      break;
  }
  const own = inputs.response_schema;
  if (!inputs.generative_ui) return own ? { mode: 'custom', schema: own } : { mode: 'none' };
  if (!own) return { mode: 'gen_ui_catalog', schema: inputs.catalog_schema };
  if (isUiSchema(own)) return { mode: 'gen_ui_deterministic', schema: own };
  return {
    mode: 'combined',
    schema: {
      $schema: JSON_SCHEMA_DRAFT_07,
      type: 'object',
      required: ['data', 'gen_ui'],
      additionalProperties: false,
      properties: {
        data: member(own, '/properties/data'),
        gen_ui: member(inputs.catalog_schema, '/properties/gen_ui'),
      },
    },
  };
}

/** A schema of the generative UI's own shape, `{components: [...]}`. */
export function isUiSchema(schema: JsonSchema): boolean {
  const properties = schema.properties;
  return typeof properties === 'object' && properties !== null && Object.hasOwn(properties, 'components');
}

/**
 * A whole schema made a member of another: `$schema` and `$id` belong to a root only, and local
 * `$ref`s (`#/definitions/x`) must now point below the member's place (`#/properties/data/...`).
 */
function member(schema: JsonSchema, at: string): JsonSchema {
  const { $schema: _draft, $id: _id, ...rest } = schema;
  return rebase(rest, at) as JsonSchema;
}

function rebase(value: unknown, at: string): unknown {
  if (Array.isArray(value)) return value.map((item) => rebase(item, at));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      key === '$ref' && typeof inner === 'string' && inner.startsWith('#')
        ? `#${at}${inner.slice(1)}`
        : rebase(inner, at),
    ]),
  );
}
