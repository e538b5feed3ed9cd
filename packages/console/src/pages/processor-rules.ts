/** The kinds of AI processor and what each does with a response schema (spec 2.4). Pure. */
import { ApiError } from '../api/problem';
import type { ProcessorKind } from '../api/types';

export const KINDS: Record<ProcessorKind, string> = {
  config: 'CONFIG stage',
  verify: 'VERIFY stage',
  execution: 'EXECUTION stage',
  change_instance_validator: 'Change Instance Validator',
  pack_optimizer: 'Pack Optimizer',
  universal_executor: 'Universal Executor',
};

/**
 * The kinds the form offers under the AI Integration settings: the Change Instance Validator
 * while `show_ai_validator` is on, every other kind while `show_ai_processor` is on. `keep` (the
 * kind of the processor being edited) stays offered, so an existing processor can be saved.
 * The switches also stop the processors themselves (docs/decisions/0040): such a processor is kept
 * but does not run while its switch is off.
 */
export function offeredKinds(
  flags: { show_ai_validator: boolean; show_ai_processor: boolean },
  keep?: ProcessorKind,
): ProcessorKind[] {
  return (Object.keys(KINDS) as ProcessorKind[]).filter(
    (kind) =>
      kind === keep ||
      (kind === 'change_instance_validator' ? flags.show_ai_validator : flags.show_ai_processor),
  );
}

/** What the schema editor says for a kind; `allowed` false: the editor is off and nothing is sent. */
export function schemaRule(kind: ProcessorKind): { allowed: boolean; note: string } {
  switch (kind) {
    case 'change_instance_validator':
      return {
        allowed: false,
        note: 'A validator answers in the internal approve/reject format: no custom schema.',
      };
    case 'universal_executor':
      return {
        allowed: true,
        note: 'Ignored: a Universal Executor always answers in the schema the platform manages.',
      };
    case 'pack_optimizer':
      return { allowed: true, note: 'Not used: a Pack Optimizer writes free-form notes.' };
    case 'config':
    case 'verify':
    case 'execution':
      return {
        allowed: true,
        note: 'Optional: a draft-07 JSON Schema of the output (type, properties, required, items, enum).',
      };
  }
}

const SCHEMA_TYPES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'];

/**
 * The schema text as the API takes it: null when empty, else a JSON object that looks like a
 * JSON Schema. Throws an ApiError naming `response_schema`, so the form shows it at the field
 * before anything is sent.
 */
export function parseSchema(text: string): Record<string, unknown> | null {
  if (text.trim() === '') return null;
  const refuse = (message: string): never => {
    throw new ApiError(400, {
      detail: 'The response schema is not valid; nothing was saved.',
      errors: { response_schema: [message] },
    });
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return refuse(`is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return refuse('must be a JSON object');
  const schema = parsed as Record<string, unknown>;
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  if (types.some((type) => !SCHEMA_TYPES.includes(type as string)))
    return refuse(`"type" must be one of ${SCHEMA_TYPES.join(', ')}`);
  if (
    schema.properties !== undefined &&
    (typeof schema.properties !== 'object' || Array.isArray(schema.properties))
  )
    return refuse('"properties" must be an object');
  if (
    schema.required !== undefined &&
    !(Array.isArray(schema.required) && schema.required.every((name) => typeof name === 'string'))
  )
    return refuse('"required" must be a list of property names');
  return schema;
}
