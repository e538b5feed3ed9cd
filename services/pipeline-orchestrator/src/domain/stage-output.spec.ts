import type { GenerateResult } from './pipeline-model';
import { stageOutput } from './stage-output';

function result(over: Partial<GenerateResult>): GenerateResult {
  return {
    request_id: 'r',
    llm_model_id: 1,
    processor_id: 1,
    reply_to: null,
    ok: true,
    output: null,
    parsed_json: null,
    usage: null,
    cost: null,
    unpriced: false,
    mode: 'native',
    attempts: 1,
    latency_ms: 1,
    error: null,
    ...over,
  };
}

const validUi = { components: [{ type: 'heading', props: { text: 'Ready', level: 2 } }] };

describe('stageOutput', () => {
  it.each([
    [
      'a schema reply is the PackData',
      'custom',
      { parsed_json: '{"a":1}' },
      { pack_data_json: '{"a":1}', gen_ui_json: null, gen_ui_valid: null },
    ],
    [
      'free text that is a JSON object',
      'none',
      { output: '{"b":2}' },
      { pack_data_json: '{"b":2}', gen_ui_json: null, gen_ui_valid: null },
    ],
    [
      'other free text is kept as {text}',
      'none',
      { output: 'all good' },
      { pack_data_json: '{"text":"all good"}', gen_ui_json: null, gen_ui_valid: null },
    ],
    [
      'a JSON array is free text too',
      'none',
      { output: '[1]' },
      { pack_data_json: '{"text":"[1]"}', gen_ui_json: null, gen_ui_valid: null },
    ],
    [
      'combined: data is the PackData, gen_ui checked',
      'combined',
      { parsed_json: JSON.stringify({ data: { c: 3 }, gen_ui: { components: [] } }) },
      { pack_data_json: '{"c":3}', gen_ui_json: '{"components":[]}', gen_ui_valid: false },
    ],
    [
      'a generative UI reply is both',
      'gen_ui_catalog',
      { parsed_json: JSON.stringify(validUi) },
      { pack_data_json: JSON.stringify(validUi), gen_ui_json: JSON.stringify(validUi), gen_ui_valid: true },
    ],
  ] as const)('%s', (_name, mode, over, expected) => {
    expect(stageOutput(result(over), mode)).toEqual(expected);
  });
});
