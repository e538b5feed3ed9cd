import Ajv from 'ajv';
import {
  approximateNumbers,
  holdsExactNumbers,
  parseExactJson,
  stringifyExactJson,
  type JsonSchema,
} from '@pack/contracts';
import { extractJson } from '@pack/llm-providers';
import type { GenerateResult } from '../records/pipeline-records';
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

/**
 * The JSON value a reply holds, numbers exact (docs/decisions/0039): under a schema the
 * llm-gateway's `parsed_json`; else the JSON found in the text, bare, in a code fence or after a
 * sentence (extractJson, as the llm-gateway reads replies); null when there is none.
 */
function replyValue(result: GenerateResult): { value: unknown } | null {
  if (result.parsed_json !== null) return { value: parseExactJson(result.parsed_json) };
  if (result.output === null) return null;
  const found = extractJson(result.output);
  return found.ok ? { value: found.value } : null;
}

/** Free-form text (no schema) is PackData when it is a bare JSON object, else kept as `{text}`. */
function asObject(text: string | null): Record<string, unknown> {
  if (text === null) return { text: '' };
  try {
    const parsed: unknown = parseExactJson(text);
    if (isObject(parsed)) return parsed;
  } catch {
    // Not JSON: free-form text.
  }
  return { text };
}

function withGenUi(data: unknown, genUi: unknown, rejected?: string): StageOutput {
  const check = checkGenUi(genUi);
  const problems = [...(rejected ? [rejected] : []), ...check.problems];
  const valid = check.valid && !rejected;
  return {
    pack_data_json: stringifyExactJson(data),
    gen_ui_json: stringifyExactJson(isObject(genUi) ? genUi : { value: genUi ?? null }),
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
 * combined `{data, gen_ui}` keeps `data` (any JSON value) as PackData and checks `gen_ui`; a
 * generative UI reply is both the PackData and the UI; under a custom schema the reply's JSON
 * value as it is (an array-root schema's array too); free text is PackData as `{text}` unless it
 * is a JSON object.
 */
export function stageOutput(result: GenerateResult, mode: FinalSchema['mode'] | null): StageOutput {
  if (mode === null || mode === 'none') return plain(asObject(result.output), null);
  const found = replyValue(result);
  // A schema's reply without JSON (not expected: the llm-gateway checked it) is kept as text.
  const reply: unknown = found ? found.value : { text: result.output ?? '' };
  switch (mode) {
    case 'combined': {
      const parts = isObject(reply) ? reply : {};
      return withGenUi('data' in parts ? parts.data : {}, parts.gen_ui);
    }
    case 'gen_ui_catalog':
    case 'gen_ui_deterministic':
      return withGenUi(reply, reply);
    case 'universal_executor':
      return plain(reply, isObject(reply) ? executorFailure(reply) : null);
    case 'custom':
    case 'validator':
      return plain(reply, null);
  }
}

function plain(reply: unknown, failure: string | null): StageOutput {
  return {
    pack_data_json: stringifyExactJson(reply),
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
 * OK when its data is good. The reply's JSON is found as the llm-gateway finds it (bare, in a
 * code fence or after a sentence). Combined mode: the reply's `data` (any JSON value) valid
 * against the processor's own schema. The generative UI modes, where the reply is the data: its
 * JSON value, or `{text}` when it holds none (no processor schema can be broken; the standard
 * renderer shows the text). The UI is kept, flagged `gen_ui_valid: false` with the reason.
 * Null: the stage fails with the llm-gateway's reason.
 */
export function genUiFallback(
  result: GenerateResult,
  mode: FinalSchema['mode'] | null,
  dataSchema: JsonSchema | null,
): StageOutput | null {
  if (result.ok || result.error?.kind !== 'structured_output' || !GEN_UI_MODES.includes(mode)) return null;
  if (result.output === null) return null;
  const found = extractJson(result.output);
  const reason = `the reply does not fit the generative UI schema: ${result.error.message}`;
  if (mode !== 'combined') {
    const reply = found.ok ? found.value : { text: result.output };
    return withGenUi(reply, found.ok ? reply : null, reason);
  }
  if (!found.ok || !isObject(found.value) || !('data' in found.value) || dataSchema === null) return null;
  const reply = found.value;
  const data = holdsExactNumbers(reply.data) ? approximateNumbers(reply.data) : reply.data;
  let valid = false;
  try {
    // Compiled once per fallback and dropped again: ajv keeps every added schema otherwise.
    valid = ajv.compile(dataSchema)(data) === true;
  } catch {
    return null;
  } finally {
    ajv.removeSchema(dataSchema);
  }
  return valid ? withGenUi(reply.data, reply.gen_ui, reason) : null;
}
