import type { GenerateResult } from '../records/pipeline-records';
import { genUiFallback, stageOutput } from './stage-output';

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
      { pack_data_json: '{"a":1}', gen_ui_json: null, gen_ui_valid: null, gen_ui_error: null, failure: null },
    ],
    [
      'free text that is a JSON object',
      'none',
      { output: '{"b":2}' },
      { pack_data_json: '{"b":2}', gen_ui_json: null, gen_ui_valid: null, gen_ui_error: null, failure: null },
    ],
    [
      'other free text is kept as {text}',
      'none',
      { output: 'all good' },
      {
        pack_data_json: '{"text":"all good"}',
        gen_ui_json: null,
        gen_ui_valid: null,
        gen_ui_error: null,
        failure: null,
      },
    ],
    [
      'a JSON array is free text too',
      'none',
      { output: '[1]' },
      {
        pack_data_json: '{"text":"[1]"}',
        gen_ui_json: null,
        gen_ui_valid: null,
        gen_ui_error: null,
        failure: null,
      },
    ],
    [
      'combined: data is the PackData, gen_ui checked',
      'combined',
      { parsed_json: JSON.stringify({ data: { c: 3 }, gen_ui: { components: [] } }) },
      {
        pack_data_json: '{"c":3}',
        gen_ui_json: '{"components":[]}',
        gen_ui_valid: false,
        gen_ui_error: 'components: at least one component is needed',
        failure: null,
      },
    ],
    [
      'a generative UI reply is both',
      'gen_ui_catalog',
      { parsed_json: JSON.stringify(validUi) },
      {
        pack_data_json: JSON.stringify(validUi),
        gen_ui_json: JSON.stringify(validUi),
        gen_ui_valid: true,
        gen_ui_error: null,
        failure: null,
      },
    ],
    [
      'an array-root schema reply is that array',
      'custom',
      { parsed_json: '[{"a":1},2]' },
      {
        pack_data_json: '[{"a":1},2]',
        gen_ui_json: null,
        gen_ui_valid: null,
        gen_ui_error: null,
        failure: null,
      },
    ],
    [
      'combined: an array data is the PackData as it is',
      'combined',
      { parsed_json: JSON.stringify({ data: [1, 'two'], gen_ui: validUi }) },
      {
        pack_data_json: '[1,"two"]',
        gen_ui_json: JSON.stringify(validUi),
        gen_ui_valid: true,
        gen_ui_error: null,
        failure: null,
      },
    ],
    [
      'combined: a scalar data is the PackData as it is',
      'combined',
      { parsed_json: JSON.stringify({ data: 'ready', gen_ui: validUi }) },
      {
        pack_data_json: '"ready"',
        gen_ui_json: JSON.stringify(validUi),
        gen_ui_valid: true,
        gen_ui_error: null,
        failure: null,
      },
    ],
  ] as const)('%s', (_name, mode, over, expected) => {
    expect(stageOutput(result(over), mode)).toEqual(expected);
  });

  it('keeps the numbers of a reply digit for digit', () => {
    const exact =
      '{"id":1234567890123456789012,"ratio":0.12345678901234567890,"n":[15397106136189694148663395280224256]}';
    expect(stageOutput(result({ parsed_json: exact }), 'custom').pack_data_json).toBe(exact);
    expect(stageOutput(result({ output: exact }), 'none').pack_data_json).toBe(exact);
    const combined = stageOutput(
      result({ parsed_json: `{"data":${exact},"gen_ui":{"components":[]}}` }),
      'combined',
    );
    expect(combined.pack_data_json).toBe(exact);
  });
});

describe('a Universal Executor reply (spec 3.1: FAILED is "stage execution failed")', () => {
  const reply = (status: string) =>
    JSON.stringify({ status, summary: 'helm upgrade timed out', steps: [], output: {} });

  it('with status "failed" fails the stage with its summary, the reply kept', () => {
    expect(stageOutput(result({ parsed_json: reply('failed') }), 'universal_executor')).toEqual({
      pack_data_json: reply('failed'),
      gen_ui_json: null,
      gen_ui_valid: null,
      gen_ui_error: null,
      failure: 'executor: helm upgrade timed out',
    });
  });

  it('with status "ok" is an OK stage', () => {
    expect(stageOutput(result({ parsed_json: reply('ok') }), 'universal_executor').failure).toBeNull();
  });
});

describe('"If the response is invalid or uses unsupported components, the UI falls back to the standard response renderer"', () => {
  const unsupported = { components: [{ type: 'chart', props: { series: [1] } }] };
  const refused = (output: string) =>
    result({
      ok: false,
      output,
      error: {
        kind: 'structured_output',
        message: 'gen_ui/components/0/type must be equal to one of the allowed values',
      },
    });
  const dataSchema = { type: 'object', properties: { passed: { type: 'boolean' } }, required: ['passed'] };

  it('keeps combined data valid against the processor schema, the UI flagged with the reason', () => {
    const output = genUiFallback(
      refused(JSON.stringify({ data: { passed: true }, gen_ui: unsupported })),
      'combined',
      dataSchema,
    );
    expect(output).toMatchObject({
      pack_data_json: '{"passed":true}',
      gen_ui_json: JSON.stringify(unsupported),
      gen_ui_valid: false,
      failure: null,
    });
    expect(output?.gen_ui_error).toContain('components.0.type: unsupported component "chart"');
  });

  it('fails the stage when the data itself is invalid', () => {
    const output = refused(JSON.stringify({ data: { passed: 'yes' }, gen_ui: unsupported }));
    expect(genUiFallback(output, 'combined', dataSchema)).toBeNull();
  });

  it('keeps a generative UI reply that is a JSON object as data; text that is not JSON as {text}', () => {
    expect(genUiFallback(refused(JSON.stringify(unsupported)), 'gen_ui_catalog', null)?.gen_ui_valid).toBe(
      false,
    );
    expect(genUiFallback(refused('I cannot draw charts'), 'gen_ui_catalog', null)).toMatchObject({
      pack_data_json: '{"text":"I cannot draw charts"}',
      gen_ui_json: '{"value":null}',
      gen_ui_valid: false,
      failure: null,
    });
  });

  it.each([
    ['in a code fence', (json: string) => `\`\`\`json\n${json}\n\`\`\``],
    ['after a sentence', (json: string) => `Here is the page you asked for: ${json}`],
  ])('reads the JSON of a reply %s like a bare one', (_name, wrap) => {
    const ui = genUiFallback(refused(wrap(JSON.stringify(unsupported))), 'gen_ui_catalog', null);
    expect(ui).toMatchObject({
      pack_data_json: JSON.stringify(unsupported),
      gen_ui_json: JSON.stringify(unsupported),
      gen_ui_valid: false,
    });
    const combined = genUiFallback(
      refused(wrap(JSON.stringify({ data: { passed: true }, gen_ui: unsupported }))),
      'combined',
      dataSchema,
    );
    expect(combined).toMatchObject({ pack_data_json: '{"passed":true}', gen_ui_valid: false });
  });

  it('checks combined data that is an array, exact numbers included, against the processor schema', () => {
    const ids = { type: 'array', items: { type: 'integer' } };
    const reply = '{"data":[1234567890123456789012,7],"gen_ui":{"components":[]}}';
    expect(genUiFallback(refused(reply), 'combined', ids)?.pack_data_json).toBe('[1234567890123456789012,7]');
    expect(
      genUiFallback(refused('{"data":[0.12345678901234567890],"gen_ui":{}}'), 'combined', ids),
    ).toBeNull();
  });

  it('leaves other failures and modes alone', () => {
    const timeout = result({ ok: false, output: '{}', error: { kind: 'timeout', message: 'slow' } });
    expect(genUiFallback(timeout, 'gen_ui_catalog', null)).toBeNull();
    expect(genUiFallback(refused('{"a":1}'), 'custom', null)).toBeNull();
  });
});
