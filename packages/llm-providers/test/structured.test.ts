import type { RecordedRequest } from '@pack/testkit';
import { generateStructured, StructuredOutputError, type Provider } from '../src';
import { HELLO, setups, type Setup } from './setups';

const SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, population: { type: 'integer', minimum: 0 } },
  required: ['city', 'population'],
  additionalProperties: false,
};
const VALID = '{"city":"Lyon","population":522000}';

/** Each protocol's own usage object for `input` and `output` tokens. */
function usage(provider: Provider, input: number, output: number): Record<string, unknown> {
  if (provider === 'vendor2') return { input_tokens: input, output_tokens: output };
  if (provider === 'vendor3') return { promptTokenCount: input, candidatesTokenCount: output };
  return { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
}

/** Where each protocol's generation request goes, and what it carries. */
const GENERATION_PATH: Record<Provider, string> = {
  vendor1: '/v1/chat/completions',
  genai: '/chat',
  vendor2: '/v1/messages',
  vendor3: ':generateContent',
  vendor1_assistant: '/v1/threads',
};

function generations(s: Setup, provider: Provider): RecordedRequest[] {
  return s.fake
    .requestsTo(GENERATION_PATH[provider])
    .filter((r) => r.method === 'POST' && !/runs/.test(r.path));
}

/** The text of the final user message a request sent, whatever the protocol. */
function lastUserText(provider: Provider, body: any): string {
  if (provider === 'vendor3') return body.contents.at(-1).parts[0].text;
  return body.messages.filter((m: any) => m.role === 'user').at(-1).content;
}

const PROVIDERS: Provider[] = ['vendor1', 'genai', 'vendor3', 'vendor2', 'vendor1_assistant'];
const EXPECTED_MODE: Record<Provider, 'native' | 'text'> = {
  vendor1: 'native',
  genai: 'native',
  vendor3: 'native',
  vendor2: 'text',
  vendor1_assistant: 'text',
};

describe.each(PROVIDERS)('structured output through %s', (provider) => {
  let s: Setup;
  beforeEach(async () => {
    s = await setups[provider]();
  });
  afterEach(() => s.fake.close());
  const ask = () => generateStructured(s.adapter(), { model: 'm-1', messages: HELLO }, SCHEMA);

  it('sends the schema the documented way and returns the parsed data', async () => {
    s.fake.scriptReplies({ text: VALID, usage: usage(provider, 40, 10) });
    const out = await ask();
    expect(out).toMatchObject({
      data: { city: 'Lyon', population: 522000 },
      mode: EXPECTED_MODE[provider],
      attempts: 1,
    });
    expect(out.usage).toMatchObject({ input_tokens: 40, output_tokens: 10 });
    const [req] = generations(s, provider);
    const body = req!.body as any;
    const prompt = lastUserText(provider, body);
    if (provider === 'vendor1' || provider === 'genai') {
      expect(body.response_format).toEqual({
        type: 'json_schema',
        json_schema: { name: 'response', schema: SCHEMA, strict: false },
      });
      expect(prompt).toBe('Say hello.');
    } else if (provider === 'vendor3') {
      expect(body.generationConfig).toEqual({
        responseMimeType: 'application/json',
        responseSchema: {
          type: 'OBJECT',
          properties: { city: { type: 'STRING' }, population: { type: 'INTEGER', minimum: 0 } },
          required: ['city', 'population'],
        },
      });
      expect(prompt).toBe('Say hello.');
    } else {
      expect(prompt.startsWith('Say hello.\n\n')).toBe(true);
      expect(prompt).toContain('"population"');
      expect(prompt).toContain('JSON Schema');
      expect(JSON.stringify(body)).not.toContain('response_format');
    }
  });

  it('reads JSON out of a code fence after leading prose', async () => {
    s.fake.scriptReplies('Here you go:\n```json\n' + VALID + '\n```');
    const out = await ask();
    expect(out.data).toEqual({ city: 'Lyon', population: 522000 });
    expect(out.attempts).toBe(1);
  });

  it('re-asks once with the validation errors after a schema violation and sums the usage', async () => {
    s.fake.scriptReplies(
      { text: '{"city":"Lyon","population":-3}', usage: usage(provider, 40, 10) },
      { text: VALID, usage: usage(provider, 70, 12) },
    );
    const out = await ask();
    expect(out.attempts).toBe(2);
    expect(out.data).toEqual({ city: 'Lyon', population: 522000 });
    expect(out.usage).toMatchObject({ input_tokens: 110, output_tokens: 22 });
    const second = generations(s, provider)[1]!.body;
    const reAsk = lastUserText(provider, second);
    expect(reAsk).toContain('population');
    expect(reAsk).toContain('>= 0');
    expect(JSON.stringify(second)).toContain('-3');
    // The schema goes with the re-ask too, the same way as the first time.
    if (EXPECTED_MODE[provider] === 'text') expect(reAsk).toContain('JSON Schema');
    else expect(JSON.stringify(second)).toMatch(/"response_format"|"responseSchema"/);
  });

  it('re-asks after a reply that is not JSON', async () => {
    s.fake.scriptReplies('I think the city is Lyon.', VALID);
    const out = await ask();
    expect(out.attempts).toBe(2);
    expect(out.data).toEqual({ city: 'Lyon', population: 522000 });
  });

  it('fails with the ajv errors after the re-ask, having billed both attempts', async () => {
    s.fake.scriptReplies(
      { text: '{"city":"Lyon"}', usage: usage(provider, 40, 10) },
      { text: '{"city":"Lyon","extra":1}', usage: usage(provider, 50, 10) },
      VALID,
    );
    const failure = await ask().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(StructuredOutputError);
    const err = failure as StructuredOutputError;
    expect(err.attempts).toBe(2);
    expect(err.errors.map((e) => e.keyword).sort()).toEqual(['additionalProperties', 'required']);
    expect(err.usage).toMatchObject({ input_tokens: 90, output_tokens: 20 });
    expect(generations(s, provider)).toHaveLength(2);
  });
});

describe('a schema Gemini cannot express', () => {
  it('goes to vendor3 as text instructions, with the reason, and is still enforced', async () => {
    const s = await setups.vendor3();
    try {
      const schema = { oneOf: [{ type: 'string' }, { type: 'integer' }] };
      s.fake.scriptReplies('{"not":"either"}', '```\n42\n```');
      const out = await generateStructured(
        s.adapter(),
        { model: 'gemini-2.5-flash', messages: HELLO },
        schema,
      );
      expect(out).toMatchObject({ data: 42, mode: 'text', attempts: 2 });
      const first = s.fake.requestsTo(':generateContent')[0]!.body as any;
      expect(first.generationConfig).toBeUndefined();
      expect(lastUserText('vendor3', first)).toContain('"oneOf"');
      const direct = await s.adapter().generate({ model: 'gemini-2.5-flash', messages: HELLO, schema });
      expect(direct.mode).toBe('text');
      expect(direct.mode_reason).toContain('#/oneOf');
    } finally {
      await s.fake.close();
    }
  });

  it('maps a nullable type list and drops only what ajv still checks', async () => {
    const s = await setups.vendor3();
    try {
      const schema = {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { note: { type: ['string', 'null'] } },
        additionalProperties: false,
      };
      s.fake.scriptReplies('{"note":null,"x":1}', '{"note":null}');
      const out = await generateStructured(
        s.adapter(),
        { model: 'gemini-2.5-flash', messages: HELLO },
        schema,
      );
      expect(out).toMatchObject({ data: { note: null }, mode: 'native', attempts: 2 });
      const first = s.fake.requestsTo(':generateContent')[0]!.body as any;
      expect(first.generationConfig.responseSchema).toEqual({
        type: 'OBJECT',
        properties: { note: { type: 'STRING', nullable: true } },
      });
    } finally {
      await s.fake.close();
    }
  });
});

/** What servers without JSON-schema response formats answer (each names the parameter it refuses). */
const REFUSALS: [string, number, unknown][] = [
  [
    'OpenAI, a model without Structured Outputs',
    400,
    {
      error: {
        message:
          "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
        type: 'invalid_request_error',
        param: 'response_format',
        code: null,
      },
    },
  ],
  [
    'vLLM before json_schema',
    400,
    {
      object: 'error',
      message:
        "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]",
      type: 'BadRequestError',
      param: null,
      code: 400,
    },
  ],
  [
    'LiteLLM',
    400,
    {
      error: {
        message:
          "litellm.UnsupportedParamsError: ollama does not support parameters: ['response_format'], for model=llama3. To drop these, set `litellm.drop_params=True`",
        type: null,
        param: null,
        code: '400',
      },
    },
  ],
  ['a gateway answering 422', 422, { detail: 'json_schema: extra fields not permitted' }],
];

describe.each(['vendor1', 'genai'] as const)(
  'spec 2.4 rule 5 "For models without such support, the schema is converted to text instructions" (%s)',
  (provider) => {
    it.each(REFUSALS)(
      'a refused json_schema (%s) is asked again once with instructions',
      async (_, status, body) => {
        const s = await setups[provider]();
        try {
          s.fake.next({ fault: { kind: 'body', status, body } });
          s.fake.scriptReplies(VALID);
          const out = await generateStructured(s.adapter(), { model: 'm-1', messages: HELLO }, SCHEMA);
          expect(out).toMatchObject({
            data: { city: 'Lyon', population: 522000 },
            mode: 'text',
            attempts: 2,
          });
          expect(out.fallback).toContain(`HTTP ${status}`);
          const [refused, asked] = generations(s, provider);
          expect((refused!.body as any).response_format.type).toBe('json_schema');
          expect(asked!.body as object).not.toHaveProperty('response_format');
          expect(lastUserText(provider, asked!.body)).toContain('conforms to this JSON Schema');
        } finally {
          await s.fake.close();
        }
      },
    );

    it('another 400, or a refusal after instructions, is the error as it was', async () => {
      const s = await setups[provider]();
      try {
        s.fake.next({ fault: { kind: 'status', status: 400, message: 'messages: too long' } });
        await expect(
          generateStructured(s.adapter(), { model: 'm-1', messages: HELLO }, SCHEMA),
        ).rejects.toMatchObject({ kind: 'http_status', status: 400 });
        expect(generations(s, provider)).toHaveLength(1);
        s.fake.next({ fault: { kind: 'body', status: 400, body: REFUSALS[0]![2] } });
        await expect(
          generateStructured(
            s.adapter(),
            { model: 'm-1', messages: HELLO, schemaAs: 'instructions' },
            SCHEMA,
          ),
        ).rejects.toMatchObject({ kind: 'http_status', status: 400 });
        const sent = generations(s, provider);
        expect(sent).toHaveLength(2);
        expect(sent[1]!.body as object).not.toHaveProperty('response_format');
      } finally {
        await s.fake.close();
      }
    });
  },
);
