/** An LLM model as the form holds it, and the body the API takes from it. Pure (model-draft.spec.ts). */
import { ApiError } from '../api/problem';
import type { LlmModel, Provider } from '../api/types';
import { isMasked, PROVIDER_FIELDS } from './providers';

export type Extra = Record<string, string | boolean>;
export interface Draft {
  name: string;
  provider: Provider;
  model_name: string;
  prompt: string;
  timeout: string;
  max_output_tokens: string;
  /** '' leaves the model's setting as it is (a new model: its provider's default). */
  structured_output: '' | 'native' | 'instructions';
  input_price_per_1m_tokens: string;
  output_price_per_1m_tokens: string;
  /** The fallbacks' model ids in order, separated by commas or spaces. */
  fallback_models: string;
  extra: Extra;
}

export const EMPTY: Draft = {
  name: '',
  provider: 'vendor1',
  model_name: '',
  prompt: '',
  timeout: '60',
  max_output_tokens: '4096',
  structured_output: '',
  input_price_per_1m_tokens: '',
  output_price_per_1m_tokens: '',
  fallback_models: '',
  extra: { verify_ssl: true, request_payload: '{}' },
};

export function draftOf(model: LlmModel): Draft {
  const extra: Extra = {};
  for (const [key, value] of Object.entries(model.extra_data))
    extra[key] =
      typeof value === 'boolean'
        ? value
        : isMasked(value)
          ? ''
          : typeof value === 'string'
            ? value
            : JSON.stringify(value ?? null);
  return {
    name: model.name,
    provider: model.provider,
    model_name: model.model_name,
    prompt: model.prompt,
    timeout: String(model.timeout),
    max_output_tokens: String(model.max_output_tokens),
    structured_output: model.structured_output,
    input_price_per_1m_tokens: model.input_price_per_1m_tokens ?? '',
    output_price_per_1m_tokens: model.output_price_per_1m_tokens ?? '',
    fallback_models: (model.fallback_models ?? []).join(', '),
    extra,
  };
}

/** The mask the API answers for a secret: sent back on an edit, it keeps the stored secret. */
const KEEP_SECRET = '********';

/**
 * The body the API takes. It names the provider, so it carries the provider's whole extra_data:
 * a blank secret on an edit goes as the mask, which keeps the stored one (the API refuses a mask
 * with a new provider, naming the field).
 */
export function bodyOf(draft: Draft, editing: boolean): Record<string, unknown> {
  const extra: Record<string, unknown> = {};
  const errors: Record<string, string[]> = {};
  for (const field of PROVIDER_FIELDS[draft.provider]) {
    const value = draft.extra[field.key];
    if (field.kind === 'boolean') extra[field.key] = value === true;
    else if (field.kind === 'json') {
      try {
        const parsed: unknown = JSON.parse(String(value ?? '{}'));
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
          throw new Error('not an object');
        extra[field.key] = parsed;
      } catch {
        errors[`extra_data.${field.key}`] = ['must be a JSON object, such as {}'];
      }
    } else if (value) extra[field.key] = String(value).trim();
    else if (field.kind === 'secret' && editing) extra[field.key] = KEEP_SECRET;
    // A blank base_url is the provider's default endpoint (null) wherever the provider has one.
    else if (field.key === 'base_url') extra[field.key] = null;
  }
  const fallbacks = draft.fallback_models.split(/[\s,]+/).filter((id) => id !== '');
  if (fallbacks.some((id) => !/^[1-9]\d{0,15}$/.test(id)))
    errors.fallback_models = ['model ids separated by commas, such as 4, 7'];
  if (Object.keys(errors).length)
    throw new ApiError(400, { detail: 'Check the highlighted fields.', errors });
  const price = (text: string) => (text.trim() === '' ? null : text.trim());
  return {
    name: draft.name,
    provider: draft.provider,
    model_name: draft.model_name,
    prompt: draft.prompt,
    timeout: Number(draft.timeout),
    max_output_tokens: Number(draft.max_output_tokens),
    ...(draft.structured_output ? { structured_output: draft.structured_output } : {}),
    input_price_per_1m_tokens: price(draft.input_price_per_1m_tokens),
    output_price_per_1m_tokens: price(draft.output_price_per_1m_tokens),
    fallback_models: fallbacks.map(Number),
    extra_data: extra,
  };
}
