import {
  defaultStructuredOutput,
  LLM_SECRET_FIELDS,
  LLM_STRUCTURED_OUTPUT,
  parseExtraData,
  type LlmModelPatch,
  type LlmProvider,
} from '@pack/contracts';
import { ValidationError, type FieldErrors } from '@pack/errors';
import { isMaskedSecret } from '@pack/secrets';
import { keepNestedSecrets, type PlainExtraData } from './extra-data';
import type { LlmModelRecord } from './model';

/** The key of genai's extra_data whose nested secret-named values are masked and kept (0013). */
export const PAYLOAD = 'request_payload';
export const MASK_NOT_A_SECRET = 'a masked value keeps a stored secret only; send the secret itself';

/**
 * The model's structured_output after `patch`: the one sent (400 when its provider has no such
 * format), else the stored one, else (and after a provider change) the provider's default.
 */
export function structuredOutputAfter(
  current: LlmModelRecord,
  provider: LlmProvider,
  patch: LlmModelPatch,
): NonNullable<LlmModelRecord['structured_output']> {
  const sent = patch.structured_output;
  if (sent !== undefined) {
    if (!LLM_STRUCTURED_OUTPUT[provider].includes(sent))
      throw new ValidationError('invalid structured_output', {
        errors: { structured_output: [`${provider} has no JSON-schema response format: use instructions`] },
      });
    return sent;
  }
  if (provider === current.provider && current.structured_output) return current.structured_output;
  return defaultStructuredOutput(provider);
}

export function checked(provider: LlmProvider, value: unknown): PlainExtraData {
  const result = parseExtraData(provider, value);
  if (!result.ok) throw new ValidationError('invalid extra_data', { errors: result.errors });
  return result.data;
}

/** A mask stored as a secret would silently break the model: a new secret must be the secret. */
export function refuseMasks(provider: LlmProvider, extra: Record<string, unknown>): void {
  const errors: FieldErrors = {};
  for (const field of LLM_SECRET_FIELDS[provider]) {
    const value = extra[field];
    if (typeof value === 'string' && isMaskedSecret(value))
      errors[`extra_data.${field}`] = [MASK_NOT_A_SECRET];
  }
  const missing: string[] = [];
  keepNestedSecrets(extra[PAYLOAD], undefined, `extra_data.${PAYLOAD}`, missing);
  for (const path of missing) errors[path] = [MASK_NOT_A_SECRET];
  if (Object.keys(errors).length > 0) throw new ValidationError('invalid extra_data', { errors });
}
