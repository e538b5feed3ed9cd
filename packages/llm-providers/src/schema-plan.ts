import type { JsonSchema, Provider, StructuredMode } from './types';

/** How each provider receives a schema: a capability of its protocol, never of the model name. */
export const STRUCTURED_CAPABILITY: Record<Provider, StructuredMode> = {
  vendor1: 'native',
  genai: 'native',
  vendor3: 'native',
  vendor2: 'text',
  vendor1_assistant: 'text',
};

/** What the adapter sends: the native parameter, or instructions appended to the final prompt. */
export type SchemaPlan =
  | { mode: 'native'; provider: 'openai'; responseFormat: Record<string, unknown> }
  | { mode: 'native'; provider: 'gemini'; responseSchema: Record<string, unknown> }
  | { mode: 'text'; instructions: string; reason?: string };

// Gemini's responseSchema is an OpenAPI 3.0 subset without these; a schema using one goes as text.
const GEMINI_UNSUPPORTED = new Set([
  '$ref',
  '$defs',
  'definitions',
  'oneOf',
  'allOf',
  'not',
  'const',
  'if',
  'then',
  'else',
  'patternProperties',
  'dependencies',
  'dependentSchemas',
  'propertyNames',
  'contains',
  'uniqueItems',
  'multipleOf',
  'exclusiveMinimum',
  'exclusiveMaximum',
]);
// Removing these only loosens the native copy; ajv still validates the reply against the full schema.
const GEMINI_DROPPED = new Set(['$schema', '$id', '$comment', 'additionalProperties', 'examples']);

export function textInstructions(schema: JsonSchema): string {
  return [
    'Reply with a single JSON value, and nothing else, that conforms to this JSON Schema:',
    '```json',
    JSON.stringify(schema, null, 2),
    '```',
  ].join('\n');
}

class Unsupported extends Error {}

/** The schema in Gemini's dialect, or where the first keyword it cannot express is. */
export function toGeminiSchema(
  schema: JsonSchema,
): { schema: Record<string, unknown> } | { unsupported: string } {
  try {
    return { schema: convert(schema, '#') };
  } catch (e) {
    if (e instanceof Unsupported) return { unsupported: e.message };
    throw e;
  }
}

function convert(node: unknown, at: string): Record<string, unknown> {
  if (typeof node !== 'object' || node === null || Array.isArray(node))
    throw new Unsupported(`${at} (a boolean schema)`);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (GEMINI_UNSUPPORTED.has(key)) throw new Unsupported(`${at}/${key}`);
    if (GEMINI_DROPPED.has(key)) continue;
    if (key === 'type') Object.assign(out, geminiType(value, `${at}/type`));
    else if (key === 'properties') {
      const props: Record<string, unknown> = {};
      for (const [name, sub] of Object.entries((value ?? {}) as Record<string, unknown>))
        props[name] = convert(sub, `${at}/properties/${name}`);
      out.properties = props;
    } else if (key === 'items') {
      if (Array.isArray(value)) throw new Unsupported(`${at}/items (a tuple)`);
      out.items = convert(value, `${at}/items`);
    } else if (key === 'anyOf') {
      if (!Array.isArray(value)) throw new Unsupported(`${at}/anyOf`);
      out.anyOf = value.map((sub, i) => convert(sub, `${at}/anyOf/${i}`));
    } else out[key] = value;
  }
  return out;
}

/** `["string", "null"]` becomes `STRING` + nullable; any other type list has no equivalent. */
function geminiType(value: unknown, at: string): Record<string, unknown> {
  const types = Array.isArray(value) ? value : [value];
  const nonNull = types.filter((t) => t !== 'null');
  if (nonNull.length !== 1 || typeof nonNull[0] !== 'string') throw new Unsupported(`${at} (a type list)`);
  const out: Record<string, unknown> = { type: nonNull[0].toUpperCase() };
  if (nonNull.length < types.length) out.nullable = true;
  return out;
}

export function planSchema(
  provider: Provider,
  schema: JsonSchema,
  as: 'native' | 'instructions' = 'native',
): SchemaPlan {
  const text = (reason?: string): SchemaPlan => ({
    mode: 'text',
    instructions: textInstructions(schema),
    ...(reason ? { reason } : {}),
  });
  if (STRUCTURED_CAPABILITY[provider] === 'text' || as === 'instructions') return text();
  if (provider === 'vendor3') {
    const converted = toGeminiSchema(schema);
    if ('unsupported' in converted)
      return text(`Gemini responseSchema cannot express ${converted.unsupported}`);
    return { mode: 'native', provider: 'gemini', responseSchema: converted.schema };
  }
  const name =
    typeof schema.title === 'string' && /^[\w-]{1,64}$/.test(schema.title) ? schema.title : 'response';
  // OpenAI's strict mode refuses schemas with optional properties or open objects, so it is not
  // claimed; ajv enforces the schema on the reply either way.
  return {
    mode: 'native',
    provider: 'openai',
    responseFormat: { type: 'json_schema', json_schema: { name, schema, strict: false } },
  };
}
