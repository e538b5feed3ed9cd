import Ajv from 'ajv';
import type { JsonSchema } from '@pack/contracts';
import type { GenerateResult } from '../pipelines/pipeline-records';
import { checkGenUi } from './gen-ui-check';
import type { FinalSchema } from '../stage-requests/final-schema';

export interface StageOutput {
  pack_data_json: string;
  gen_ui_json: string | null;
  gen_ui_valid: boolean | null;
  /** Why the generative UI is not rendered (clients show the standard renderer); null when valid or absent. */
  gen_ui_error: string | null;
  /**
   * The stage failed although the reply is stored: a Universal Executor answering
   * `status: "failed"` (spec 3.1: FAILED is "stage execution failed"). Null otherwise.
   */
  failure: string | null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Free text that is not a JSON object is kept as `{text}`: PackData is always a JSON object. */
function asObject(text: string | null): Record<string, unknown> {
  if (text === null) return { text: '' };
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) return parsed;
  } catch {
    // Not JSON: free-form text.
  }
  return { text };
}

function withGenUi(data: Record<string, unknown>, genUi: unknown, rejected?: string): StageOutput {
  const check = checkGenUi(genUi);
  const problems = [...(rejected ? [rejected] : []), ...check.problems];
  const valid = check.valid && !rejected;
  return {
    pack_data_json: JSON.stringify(data),
    gen_ui_json: JSON.stringify(isObject(genUi) ? genUi : { value: genUi ?? null }),
    gen_ui_valid: valid,
    gen_ui_error: valid ? null : problems.slice(0, 10).join('; '),
    failure: null,
  };
}

/** The Universal Executor's own verdict (its managed `{status, summary, ...}` reply, 0023). */
function executorFailure(reply: Record<string, unknown>): string | null {
  if (reply.status !== 'failed') return null;
  const summary = typeof reply.summary === 'string' && reply.summary.trim() !== '' ? reply.summary : null;
  return `executor: ${summary ?? 'the Universal Executor reported status "failed"'}`;
}

/**
 * What a successful generate result stores, by the schema mode the stage asked with (0023):
 * combined `{data, gen_ui}` keeps `data` as PackData and checks `gen_ui`; a generative UI reply
 * is both the PackData and the UI; anything else is the PackData alone.
 */
export function stageOutput(result: GenerateResult, mode: FinalSchema['mode'] | null): StageOutput {
  const reply = asObject(result.parsed_json ?? result.output);
  switch (mode) {
    case 'combined':
      return withGenUi(isObject(reply.data) ? reply.data : {}, reply.gen_ui);
    case 'gen_ui_catalog':
    case 'gen_ui_deterministic':
      return withGenUi(reply, reply);
    case 'universal_executor':
      return plain(reply, executorFailure(reply));
    case 'custom':
    case 'none':
    case 'validator':
    case null:
      return plain(reply, null);
  }
}

function plain(reply: Record<string, unknown>, failure: string | null): StageOutput {
  return {
    pack_data_json: JSON.stringify(reply),
    gen_ui_json: null,
    gen_ui_valid: null,
    gen_ui_error: null,
    failure,
  };
}

const GEN_UI_MODES: readonly (FinalSchema['mode'] | null)[] = [
  'combined',
  'gen_ui_catalog',
  'gen_ui_deterministic',
];

const ajv = new Ajv({ strict: false, allErrors: true });

/**
 * Spec 2.4 rule 4 ("If the response is invalid or uses unsupported components, the UI falls
 * back to the standard response renderer"): a generative UI stage whose reply failed the schema
 * sent to the model (the llm-gateway's `structured_output` error, after its re-ask) still ends
 * OK when its data is good: the reply's `data` valid against the processor's own schema
 * (combined mode), or any JSON object reply (the generative UI modes, where the reply is the
 * data). The UI is kept, flagged `gen_ui_valid: false` with the reason. Null: the stage fails.
 */
export function genUiFallback(
  result: GenerateResult,
  mode: FinalSchema['mode'] | null,
  dataSchema: JsonSchema | null,
): StageOutput | null {
  if (result.ok || result.error?.kind !== 'structured_output' || !GEN_UI_MODES.includes(mode)) return null;
  if (result.output === null) return null;
  let reply: unknown;
  try {
    reply = JSON.parse(result.output);
  } catch {
    return null;
  }
  if (!isObject(reply)) return null;
  const reason = `the reply does not fit the generative UI schema: ${result.error.message}`;
  if (mode !== 'combined') return withGenUi(reply, reply, reason);
  if (!isObject(reply.data) || dataSchema === null) return null;
  let valid = false;
  try {
    // Compiled once per fallback and dropped again: ajv keeps every added schema otherwise.
    valid = ajv.compile(dataSchema)(reply.data) === true;
  } catch {
    return null;
  } finally {
    ajv.removeSchema(dataSchema);
  }
  return valid ? withGenUi(reply.data, reply.gen_ui, reason) : null;
}
