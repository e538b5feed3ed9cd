import { outboxDrained, seededSecret } from '@pack/testkit';
import { LlmGatewayHarness, startLlmGateway, MODELS, admin, examples } from './harness';

const { vendor1, vendor3, genai } = examples;
/** A key refused for its line break: the answer must not carry it back. */
const CRLF_KEY = `sk-${seededSecret('a refused api_key with CR/LF')}\r\nX-Injected: yes`;
const withExtra = (extra: Record<string, unknown>) => ({
  ...vendor1,
  extra_data: { ...vendor1.extra_data, ...extra },
});
const { base_url: _url, ...vendor1WithoutUrl } = vendor1.extra_data;
const { base_url: _default, ...vendor3WithoutUrl } = vendor3.extra_data;

/** [what, body, the one field the answer must name] */
const CREATE_CASES: [string, unknown, string][] = [
  ['an unknown provider', { ...vendor1, provider: 'vendor9' }, 'provider'],
  ['no provider', { ...vendor1, provider: undefined }, 'provider'],
  ['no extra_data', { ...vendor1, extra_data: undefined }, 'extra_data'],
  ['a missing extra_data key', { ...vendor1, extra_data: vendor1WithoutUrl }, 'extra_data.base_url'],
  [
    'vendor3 without base_url (null is the default endpoint)',
    { ...vendor3, extra_data: vendor3WithoutUrl },
    'extra_data.base_url',
  ],
  ['an unknown extra_data key', withExtra({ organization: 'org-1' }), 'extra_data.organization'],
  [
    'a key of another provider',
    withExtra({ VENDOR1_ASSISTANT_ID: 'asst_1' }),
    'extra_data.VENDOR1_ASSISTANT_ID',
  ],
  ['a base_url that is not a URL', withExtra({ base_url: 'api.example.com' }), 'extra_data.base_url'],
  ['an ftp base_url', withExtra({ base_url: 'ftp://api.example.com/' }), 'extra_data.base_url'],
  ['a javascript: base_url', withExtra({ base_url: 'javascript:alert(1)' }), 'extra_data.base_url'],
  [
    'credentials in base_url',
    withExtra({ base_url: 'https://user:pass@api.example.com/v1' }),
    'extra_data.base_url',
  ],
  [
    'a user name in base_url',
    withExtra({ base_url: 'https://user@api.example.com/v1' }),
    'extra_data.base_url',
  ],
  ['an empty api_key', withExtra({ api_key: '' }), 'extra_data.api_key'],
  // Secrets and header values with CR, LF or NUL are refused at write time (400 naming the field).
  ['an api_key with CR/LF', withExtra({ api_key: CRLF_KEY }), 'extra_data.api_key'],
  ['an api_key with a lone LF', withExtra({ api_key: 'sk-lf\nX-Injected: yes' }), 'extra_data.api_key'],
  ['an api_key with NUL', withExtra({ api_key: 'sk-nul\u0000tail' }), 'extra_data.api_key'],
  [
    'genai credentials with CR/LF',
    { ...genai, extra_data: { ...genai.extra_data, credentials: 'Basic abc\r\nX-Injected: yes' } },
    'extra_data.credentials',
  ],
  [
    'a vendor1_assistant key with CR',
    {
      ...vendor1,
      provider: 'vendor1_assistant',
      extra_data: { VENDOR1_API_KEY: 'sk-cr\rX', VENDOR1_ASSISTANT_ID: 'asst_1' },
    },
    'extra_data.VENDOR1_API_KEY',
  ],
  ['a masked api_key', withExtra({ api_key: '********1111' }), 'extra_data.api_key'],
  [
    'a genai token_url with credentials',
    { ...genai, extra_data: { ...genai.extra_data, token_url: 'https://a:b@auth.example.com/' } },
    'extra_data.token_url',
  ],
  [
    'a genai request_payload that is not an object',
    { ...genai, extra_data: { ...genai.extra_data, request_payload: '{}' } },
    'extra_data.request_payload',
  ],
  [
    'a genai verify_ssl that is not a boolean',
    { ...genai, extra_data: { ...genai.extra_data, verify_ssl: 'false' } },
    'extra_data.verify_ssl',
  ],
  ['a negative price', { ...vendor1, input_price_per_1m_tokens: -0.15 }, 'input_price_per_1m_tokens'],
  ['a negative price string', { ...vendor1, output_price_per_1m_tokens: '-1' }, 'output_price_per_1m_tokens'],
  [
    'a price that is not a number',
    { ...vendor1, input_price_per_1m_tokens: 'cheap' },
    'input_price_per_1m_tokens',
  ],
  [
    'a price with a thousands separator',
    { ...vendor1, input_price_per_1m_tokens: '1,5' },
    'input_price_per_1m_tokens',
  ],
  [
    'a price with more than 6 decimals',
    { ...vendor1, input_price_per_1m_tokens: '0.0000001' },
    'input_price_per_1m_tokens',
  ],
  [
    'a price number with 7 decimals',
    { ...vendor1, output_price_per_1m_tokens: 1e-7 },
    'output_price_per_1m_tokens',
  ],
  ['a zero timeout', { ...vendor1, timeout: 0 }, 'timeout'],
  ['a negative timeout', { ...vendor1, timeout: -5 }, 'timeout'],
  ['a timeout over 600 seconds', { ...vendor1, timeout: 601 }, 'timeout'],
  ['a timeout as text', { ...vendor1, timeout: '60' }, 'timeout'],
  ['an empty name', { ...vendor1, name: '  ' }, 'name'],
  ['an unknown top-level field', { ...vendor1, temperature: 0.2 }, 'temperature'],
];

const PATCH_CASES: [string, unknown, string][] = [
  ['an unknown extra_data key', { extra_data: { organization: 'org-1' } }, 'extra_data.organization'],
  [
    'credentials in base_url',
    { extra_data: { base_url: 'http://u:p@api.example.com/' } },
    'extra_data.base_url',
  ],
  ['an api_key with CR/LF', { extra_data: { api_key: CRLF_KEY } }, 'extra_data.api_key'],
  ['an unknown provider', { provider: 'vendor9' }, 'provider'],
  ['a new provider without extra_data', { provider: 'vendor2' }, 'extra_data'],
  [
    'a new provider with a masked secret',
    {
      provider: 'vendor2',
      extra_data: { api_key: '********1111', base_url: 'https://messages.example.com' },
    },
    'extra_data.api_key',
  ],
  ['a negative price', { output_price_per_1m_tokens: '-0.5' }, 'output_price_per_1m_tokens'],
  [
    'a price with more than 6 decimals',
    { input_price_per_1m_tokens: '0.1234567' },
    'input_price_per_1m_tokens',
  ],
  ['a timeout over 600 seconds', { timeout: 1000 }, 'timeout'],
  ['a null timeout', { timeout: null }, 'timeout'],
];

describe('bad input to LLM models', () => {
  let llm: LlmGatewayHarness;
  let id: number;
  beforeAll(async () => {
    llm = await startLlmGateway();
    id = (await llm.create(vendor1)).body.id;
    await outboxDrained(llm.service); // the model's event, published before any snapshot is taken
  });
  afterAll(async () => {
    await llm.stop();
  });

  async function expectRefused(send: () => ReturnType<LlmGatewayHarness['create']>, field: string) {
    const before = await llm.rawDatabase();
    const answer = await send();
    expect({ status: answer.status, fields: Object.keys(answer.body.errors ?? {}) }).toEqual({
      status: 400,
      fields: [field],
    });
    expect(answer.headers.get('content-type')).toContain('application/problem+json');
    expect(await llm.rawDatabase()).toEqual(before);
  }

  it.each(CREATE_CASES)('POST with %s: 400 naming the field, nothing stored', async (_what, body, field) => {
    await expectRefused(() => llm.create(body), field);
  });

  it.each(PATCH_CASES)('PATCH with %s: 400 naming the field, nothing changed', async (_what, body, field) => {
    await expectRefused(() => llm.patch(id, body), field);
  });

  it('a connection test with an api_key holding CR/LF: 400 naming the field, nothing sent', async () => {
    const answer = await llm.as(admin, 'POST', `${MODELS}test_connection/${id}/`, {
      extra_data: { api_key: CRLF_KEY },
    });
    expect({ status: answer.status, fields: Object.keys(answer.body.errors ?? {}) }).toEqual({
      status: 400,
      fields: ['extra_data.api_key'],
    });
  });
});
