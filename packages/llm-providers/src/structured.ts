import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { approximateNumbers, holdsExactNumbers } from '@pack/contracts';
import { ProviderHttpError } from './errors';
import { extractJson } from './extract-json';
import type { GenerateRequest, JsonSchema, LlmAdapter, StructuredMode, Usage } from './types';

/** The first answer plus one re-ask that feeds the validation errors back; then a typed error. */
export const MAX_STRUCTURED_ATTEMPTS = 2;

export interface StructuredResult<T = unknown> {
  data: T;
  /** The reply the data was read from. */
  text: string;
  /** Every attempt's tokens added up: a re-ask is billed too. */
  usage: Usage;
  mode: StructuredMode;
  attempts: number;
  /** Set when the server refused the structured parameter and the schema went as instructions. */
  fallback?: string;
}

/** The model never produced JSON valid for the schema, re-ask included. */
export class StructuredOutputError extends Error {
  readonly kind = 'structured_output';
  constructor(
    message: string,
    /** ajv's errors of the last reply; empty when it was not JSON at all. */
    readonly errors: ErrorObject[],
    readonly attempts: number,
    /** The last reply, and the tokens all attempts used (they are billed). */
    readonly text: string,
    readonly usage: Usage,
    /** How the schema reached the model in the last attempt. */
    readonly mode: StructuredMode = 'text',
  ) {
    super(message);
    this.name = 'StructuredOutputError';
  }
}

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new WeakMap<JsonSchema, ValidateFunction>();

function validatorOf(schema: JsonSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    // The schema itself is bad: a caller bug, thrown before any tokens are spent.
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** Why `schema` cannot be used to validate replies (ajv refuses it), or null when it can. */
export function schemaProblem(schema: JsonSchema): string | null {
  try {
    validatorOf(schema);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

type Check = { ok: true; data: unknown } | { ok: false; problem: string; errors: ErrorObject[] };

function check(text: string, validate: ValidateFunction): Check {
  const parsed = extractJson(text);
  if (!parsed.ok) return { ok: false, problem: parsed.problem, errors: [] };
  // ajv checks types and ranges on doubles; the data kept is the exact value (docs/decisions/0039).
  const checked = holdsExactNumbers(parsed.value) ? approximateNumbers(parsed.value) : parsed.value;
  if (validate(checked)) return { ok: true, data: parsed.value };
  const errors = validate.errors ?? [];
  return { ok: false, problem: ajv.errorsText(errors, { dataVar: 'reply' }), errors };
}

export function addUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    raw: [...(Array.isArray(a.raw) ? (a.raw as unknown[]) : [a.raw]), b.raw],
  };
  if (a.cached_input_tokens !== undefined || b.cached_input_tokens !== undefined)
    sum.cached_input_tokens = (a.cached_input_tokens ?? 0) + (b.cached_input_tokens ?? 0);
  if (a.reasoning_tokens !== undefined || b.reasoning_tokens !== undefined)
    sum.reasoning_tokens = (a.reasoning_tokens ?? 0) + (b.reasoning_tokens ?? 0);
  return sum;
}

/**
 * A generation whose reply must be JSON valid for `schema`. Provider errors of either attempt
 * propagate unchanged (retrying those is the caller's policy); `usage.raw` lists each attempt's raw usage.
 */
export async function generateStructured<T = unknown>(
  adapter: LlmAdapter,
  request: Omit<GenerateRequest, 'schema'>,
  schema: JsonSchema,
): Promise<StructuredResult<T>> {
  const validate = validatorOf(schema);
  let messages = request.messages;
  let schemaAs = request.schemaAs;
  let fallback: string | undefined;
  let usage: Usage | undefined;
  let calls = 0;
  for (let attempt = 1; ; attempt++) {
    let out;
    try {
      calls += 1;
      out = await adapter.generate({ ...request, messages, schema, schemaAs });
    } catch (error) {
      // Spec 2.4 rule 5: a model without JSON-schema response formats gets the schema as text
      // instructions. The server said so by refusing the parameter: ask again, once, that way.
      if (schemaAs === 'instructions' || !isStructuredRefusal(error)) throw error;
      schemaAs = 'instructions';
      fallback = `the provider refused the structured parameter: ${(error as Error).message}`.slice(0, 300);
      attempt -= 1;
      continue;
    }
    usage = usage ? addUsage(usage, out.usage) : { ...out.usage, raw: [out.usage.raw] };
    const mode = out.mode ?? 'text';
    const result = check(out.text, validate);
    if (result.ok)
      return {
        data: result.data as T,
        text: out.text,
        usage,
        mode,
        attempts: calls,
        ...(fallback ? { fallback } : {}),
      };
    if (attempt >= MAX_STRUCTURED_ATTEMPTS)
      throw new StructuredOutputError(
        `no valid structured output after ${attempt} attempts: ${result.problem}`.slice(0, 500),
        result.errors,
        calls,
        out.text,
        usage,
        mode,
      );
    // The re-ask shows the model its own reply and what was wrong with it.
    messages = [
      ...request.messages,
      { role: 'assistant', content: out.text },
      {
        role: 'user',
        content: `That reply is not valid: ${result.problem}. Answer again with only the corrected JSON value.`,
      },
    ];
  }
}

function isStructuredRefusal(error: unknown): boolean {
  return error instanceof ProviderHttpError && error.refusesStructuredOutput;
}
