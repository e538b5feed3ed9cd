import { z } from 'zod';
import { plainHttpUrl } from './http-url';
import { priceSchema } from './prices';
import { FALLBACK_NOTE, fallbackModelsSchema, timeoutSchema as timeout } from './provider-calls';
import { nonBlankText, storedText } from './text';

export { isPlainHttpUrl, plainHttpUrl, HTTP_URL_PATTERN } from './http-url';
export { canonicalDecimal, MAX_PRICE_DECIMALS, priceSchema } from './prices';
export * from './provider-calls';

/** LLM Model profiles (spec 2.1, DESIGN section 6). */
export const LLM_PROVIDERS = ['vendor1', 'vendor1_assistant', 'vendor2', 'vendor3', 'genai'] as const;
export const llmProviderSchema = z.enum(LLM_PROVIDERS);
export type LlmProvider = z.infer<typeof llmProviderSchema>;

/** The extra_data keys holding secrets, per provider: encrypted at rest, masked in every response. */
export const LLM_SECRET_FIELDS: Record<LlmProvider, readonly string[]> = {
  vendor1: ['api_key'],
  vendor1_assistant: ['VENDOR1_API_KEY'],
  vendor2: ['api_key'],
  vendor3: ['api_key'],
  genai: ['credentials'],
};

/** Stored trimmed and in the WHATWG URL parser's form (HTTP://A/./ -> http://a/), as it is called. */
/**
 * Where a model's URLs may point. Models are an administrator's, and an admin's own vLLM, Ollama
 * or gateway lives on the company network: private and loopback addresses pass by default.
 * Link-local and cloud metadata addresses would hand out the platform's own credentials, so they
 * stay refused unless an operator names their range.
 */
export const MODEL_URL_RULE =
  'Model URLs may point at public, private-network (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) and loopback addresses; link-local (169.254/16, fe80::/10), cloud metadata and other special addresses are refused unless PACK_ALLOWED_TARGET_CIDRS of the llm-gateway service names their range (PACK_MODEL_PRIVATE_TARGETS=false there refuses private and loopback too). A host name is checked again at every connection';
const httpUrl = plainHttpUrl(`http(s) URL (surrounding spaces removed). ${MODEL_URL_RULE}`, {
  trimmed: true,
}).transform((value) => new URL(value).href);
/**
 * Secrets go out as HTTP header values: a CR or LF would split the header (undici refuses it at
 * call time, so the model could never work), a NUL is refused by storedText.
 */
const HEADER_BREAK = /[\r\n]/;
const headerValue = () =>
  storedText().refine(
    (value) => !HEADER_BREAK.test(value),
    'must not contain CR or LF: it is sent as an HTTP header value',
  );
const secret = (description: string) =>
  headerValue().min(1).max(4096).describe(`${description} (secret: masked in responses)`);
/** A masked value as a read shows it: eight `*` and at most four more characters (@pack/secrets). */
const MASK_SHAPE = '^\\*{8}[\\s\\S]{0,4}$';
/**
 * A new model's secret: a masked value sent back keeps the stored secret, and a new model has
 * none, so the server refuses one; the document says so (`not` the mask's shape).
 */
const newSecret = (description: string) =>
  headerValue()
    .min(1)
    .max(4096)
    .refine(
      (value) => !new RegExp(MASK_SHAPE, 'u').test(value),
      'a masked value keeps a stored secret only; a new model needs the secret itself',
    )
    .meta({ not: { pattern: MASK_SHAPE }, description: `${description} (secret: masked in responses)` });
/** Spec endpoint 2: "with extra_data.base_url possibly null": null is the provider's default endpoint. */
const baseUrl = httpUrl.nullable().describe("http(s) URL; null: the provider's default endpoint");

/** genai's token request body: OAuth2's form encoding (the default) or JSON. */
export const TOKEN_REQUEST_FORMATS = ['form', 'json'] as const;

/** extra_data per provider, with `secret` the type of its secrets. */
const extraDataSchemas = (secret: (description: string) => z.ZodString) => {
  const apiKeyAndUrl = z.strictObject({ api_key: secret('API key'), base_url: baseUrl });
  return {
    vendor1: apiKeyAndUrl,
    vendor1_assistant: z.strictObject({
      VENDOR1_API_KEY: secret('API key'),
      VENDOR1_ASSISTANT_ID: nonBlankText(200),
      base_url: baseUrl.optional(),
    }),
    vendor2: apiKeyAndUrl,
    vendor3: z.strictObject({
      api_key: secret('API key'),
      base_url: baseUrl,
    }),
    genai: z.strictObject({
      token_url: httpUrl,
      request_url: httpUrl,
      credentials: secret('The Authorization header value sent to token_url'),
      verify_ssl: z.boolean(),
      request_payload: z.record(z.string(), z.unknown()).describe('Merged into every request body'),
      token_request_format: z
        .enum(TOKEN_REQUEST_FORMATS)
        .optional()
        .describe(
          'How the token request body (grant_type=client_credentials) is encoded: `form` (application/x-www-form-urlencoded, OAuth2 RFC 6749 section 4.4; the default when absent) or `json` for token servers that want JSON',
        ),
    }),
  } satisfies Record<LlmProvider, z.ZodType>;
};
export const llmExtraDataSchemas = extraDataSchemas(secret);
/** A new model's extra_data: as llmExtraDataSchemas, with no masked value for a secret. */
const newModelExtraDataSchemas = extraDataSchemas(newSecret);
export type LlmExtraData = { [P in LlmProvider]: z.infer<(typeof llmExtraDataSchemas)[P]> };

const name = nonBlankText(200);
const modelName = nonBlankText(200);
const prompt = storedText().max(100_000);

/** The output budget of a model without its own setting: long enough for a stage's configuration. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;
const maxOutputTokens = z
  .number()
  .int()
  .min(1)
  .max(1_000_000)
  .describe(
    "Most tokens one reply may generate (1..1000000, default 4096), sent in each protocol's own field: max_completion_tokens (vendor1, vendor1_assistant), max_tokens (vendor2, genai), generationConfig.maxOutputTokens (vendor3)",
  );

/**
 * Whether a model takes a JSON-schema response format (spec 2.4 rule 5): `native` sends the
 * schema as the protocol's structured parameter, `instructions` as text appended to the final
 * prompt. The default follows the provider's protocol; vendor2 and vendor1_assistant have no
 * such parameter, so only `instructions`. A server that refuses the parameter gets the schema
 * as instructions on a second call (docs/decisions/0041).
 */
export const STRUCTURED_OUTPUT_MODES = ['native', 'instructions'] as const;
export type StructuredOutputMode = (typeof STRUCTURED_OUTPUT_MODES)[number];
export const LLM_STRUCTURED_OUTPUT: Record<LlmProvider, readonly StructuredOutputMode[]> = {
  vendor1: ['native', 'instructions'],
  vendor1_assistant: ['instructions'],
  vendor2: ['instructions'],
  vendor3: ['native', 'instructions'],
  genai: ['native', 'instructions'],
};
/** The setting of a model that has none of its own: the first its provider allows. */
export const defaultStructuredOutput = (provider: LlmProvider): StructuredOutputMode =>
  LLM_STRUCTURED_OUTPUT[provider][0]!;
const STRUCTURED_OUTPUT_NOTE =
  "How a response schema reaches the model: `native` (the provider's JSON-schema response format) or `instructions` (text appended to the final prompt); default by provider: native for vendor1, vendor3 and genai, instructions for vendor2 and vendor1_assistant (which have no such format). When a server refuses the native format (HTTP 400 naming it), the call is made again once with instructions";
const structuredOutputOf = (provider: LlmProvider) =>
  z
    .enum(LLM_STRUCTURED_OUTPUT[provider] as unknown as [StructuredOutputMode, ...StructuredOutputMode[]])
    .describe(STRUCTURED_OUTPUT_NOTE);

/** Fields a read returns that no write changes: a body copied from a read may carry them (ignored). */
export const LLM_MODEL_READ_ONLY_FIELDS = ['id', 'created_at', 'updated_at'] as const;
const readOnlyFields = Object.fromEntries(
  LLM_MODEL_READ_ONLY_FIELDS.map((field) => [
    field,
    z.unknown().optional().describe('Read-only, as a read returns it: ignored'),
  ]),
) as Record<(typeof LLM_MODEL_READ_ONLY_FIELDS)[number], z.ZodOptional<z.ZodUnknown>>;

/** The body without the read-only fields a copy of a read carries (they are ignored, never stored). */
export function withoutReadOnlyFields<T extends object>(
  body: T,
): Omit<T, (typeof LLM_MODEL_READ_ONLY_FIELDS)[number]> {
  const copy = { ...body } as Record<string, unknown>;
  for (const field of LLM_MODEL_READ_ONLY_FIELDS) delete copy[field];
  return copy as Omit<T, (typeof LLM_MODEL_READ_ONLY_FIELDS)[number]>;
}

const createFields = {
  name,
  model_name: modelName,
  prompt: prompt.default(''),
  timeout: timeout.default(60),
  max_output_tokens: maxOutputTokens.default(DEFAULT_MAX_OUTPUT_TOKENS),
  input_price_per_1m_tokens: priceSchema.default(null),
  output_price_per_1m_tokens: priceSchema.default(null),
  fallback_models: fallbackModelsSchema.default([]),
};

/** `POST /v1/ai/llm_models/`: extra_data is checked against the provider's keys. */
export const llmModelCreateSchema = z.discriminatedUnion(
  'provider',
  LLM_PROVIDERS.map((provider) =>
    z.strictObject({
      ...readOnlyFields,
      ...createFields,
      provider: z.literal(provider),
      extra_data: newModelExtraDataSchemas[provider],
      structured_output: structuredOutputOf(provider).default(defaultStructuredOutput(provider)),
    }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]],
);
export type LlmModelCreate = {
  [P in LlmProvider]: z.infer<z.ZodObject<typeof createFields>> & {
    provider: P;
    extra_data: LlmExtraData[P];
    structured_output: StructuredOutputMode;
  };
}[LlmProvider];

const patchFields = {
  ...readOnlyFields,
  name: name.optional(),
  model_name: modelName.optional(),
  prompt: prompt.optional(),
  timeout: timeout.optional(),
  max_output_tokens: maxOutputTokens.optional(),
  input_price_per_1m_tokens: priceSchema.optional(),
  output_price_per_1m_tokens: priceSchema.optional(),
  fallback_models: fallbackModelsSchema.optional(),
};

/** Keys of one provider, any subset: what a PATCH without `provider` merges into the stored ones. */
const partialExtraData = z
  .union(LLM_PROVIDERS.map((provider) => llmExtraDataSchemas[provider].partial()))
  .describe(
    "Any of the stored provider's extra_data keys (see POST), merged into the stored ones; keys of another provider are refused",
  );

/**
 * `PATCH /v1/ai/llm_models/<id>/` and the connection test's body: any subset. A body that names
 * `provider` carries that provider's whole extra_data (as on create: the same provider's masked
 * secrets keep the stored ones); a body without it may carry some keys of the stored provider's
 * extra_data, merged into the stored ones. One branch per provider and one without `provider`,
 * so the OpenAPI document states exactly this and the server enforces exactly the document.
 */
export const llmModelPatchSchema = z.discriminatedUnion('provider', [
  ...LLM_PROVIDERS.map((provider) =>
    z.strictObject({
      ...patchFields,
      provider: z.literal(provider),
      extra_data: llmExtraDataSchemas[provider],
      structured_output: structuredOutputOf(provider).optional(),
    }),
  ),
  z.strictObject({
    ...patchFields,
    provider: z
      .undefined()
      .optional()
      .meta({ not: {} })
      .describe('Absent: the stored provider is kept (a body naming a provider is another branch)'),
    extra_data: partialExtraData.optional(),
    structured_output: z
      .enum(STRUCTURED_OUTPUT_MODES)
      .optional()
      .describe(`${STRUCTURED_OUTPUT_NOTE}. Checked against the stored provider`),
  }),
] as unknown as [z.ZodObject, ...z.ZodObject[]]);
/** A patch as the domain takes it: the read-only fields dropped (`withoutReadOnlyFields`). */
export interface LlmModelPatch {
  name?: string;
  provider?: LlmProvider;
  model_name?: string;
  prompt?: string;
  timeout?: number;
  max_output_tokens?: number;
  input_price_per_1m_tokens?: string | null;
  output_price_per_1m_tokens?: string | null;
  fallback_models?: number[];
  structured_output?: StructuredOutputMode;
  extra_data?: Record<string, unknown>;
}

/** A stored model as the API returns it: secrets masked, prices as decimal strings or null. */
export const llmModelViewSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  provider: llmProviderSchema,
  model_name: z.string(),
  prompt: z.string(),
  timeout: z.number(),
  max_output_tokens: z.number().int(),
  structured_output: z.enum(STRUCTURED_OUTPUT_MODES).describe(STRUCTURED_OUTPUT_NOTE),
  input_price_per_1m_tokens: z.string().nullable(),
  output_price_per_1m_tokens: z.string().nullable(),
  fallback_models: z.array(z.number().int()).describe(FALLBACK_NOTE),
  extra_data: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  updated_at: z.string(),
});
export type LlmModelView = z.infer<typeof llmModelViewSchema>;

/** extra_data checked against `provider`, or the problems keyed by `extra_data.<key>`. */
export function parseExtraData(
  provider: LlmProvider,
  value: unknown,
): { ok: true; data: Record<string, unknown> } | { ok: false; errors: Record<string, string[]> } {
  const result = llmExtraDataSchemas[provider].safeParse(value);
  if (result.success) return { ok: true, data: result.data };
  const errors: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const issue of result.error.issues) {
    const base = ['extra_data', ...issue.path.map(String)];
    const keys =
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => [...base, key].join('.'))
        : [base.join('.')];
    for (const key of keys)
      (errors[key] ??= []).push(issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message);
  }
  return { ok: false, errors };
}
