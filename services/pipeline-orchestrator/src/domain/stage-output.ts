import type { GenerateResult } from './pipeline-model';
import { checkGenUi } from './gen-ui-check';
import type { FinalSchema } from './final-schema';

export interface StageOutput {
  pack_data_json: string;
  gen_ui_json: string | null;
  gen_ui_valid: boolean | null;
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

function withGenUi(data: Record<string, unknown>, genUi: unknown): StageOutput {
  return {
    pack_data_json: JSON.stringify(data),
    gen_ui_json: JSON.stringify(isObject(genUi) ? genUi : { value: genUi ?? null }),
    gen_ui_valid: checkGenUi(genUi).valid,
  };
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
    case 'custom':
    case 'none':
    case 'universal_executor':
    case 'validator':
    case null:
      return { pack_data_json: JSON.stringify(reply), gen_ui_json: null, gen_ui_valid: null };
  }
}
