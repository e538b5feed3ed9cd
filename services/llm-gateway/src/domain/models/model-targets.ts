import { LLM_SECRET_FIELDS, type LlmProvider } from '@pack/contracts';
import { ValidationError, type FieldErrors } from '@pack/errors';
import { isMaskedSecret } from '@pack/secrets';
import type { PlainExtraData } from './extra-data';

/**
 * Why the platform refuses to call a URL (the address guard's sentence, naming the rule and
 * PACK_ALLOWED_TARGET_CIDRS), or null. Host names are resolved now and again at connect time.
 */
export type TargetCheck = (url: string) => Promise<string | null>;

/** Every extra_data key that holds a URL the gateway calls. */
export const URL_FIELDS = ['base_url', 'token_url', 'request_url'] as const;
const PAYLOAD = 'request_payload';

/**
 * Refuses (400 naming each field) the URLs of `extra` the address guard refuses: every URL, or
 * those of `only` (the keys a change sent).
 */
export async function refuseTargets(
  check: TargetCheck,
  extra: PlainExtraData,
  only?: Record<string, unknown>,
): Promise<void> {
  const errors: FieldErrors = {};
  for (const field of URL_FIELDS) {
    const url = extra[field];
    if (typeof url !== 'string' || (only && !(field in only))) continue;
    const reason = await check(url);
    if (reason) errors[`extra_data.${field}`] = [reason];
  }
  if (Object.keys(errors).length > 0) throw new ValidationError('target refused', { errors });
}

const comparable = (url: unknown): string => {
  if (typeof url !== 'string') return '';
  try {
    return new URL(url.trim()).href;
  } catch {
    return url;
  }
};

const SECRET_WITH_URL =
  'required when the test overrides a URL of the model: the stored secret is only sent to the stored URLs';

/**
 * A connection test that points a model elsewhere (any URL other than the stored one) must bring
 * its own secrets: the stored ones (genai's request_payload included, whose values count as
 * secrets) never go to a URL a request names. 400 naming each secret field that is missing.
 */
export function refuseStoredSecretsElsewhere(
  provider: LlmProvider,
  stored: PlainExtraData,
  tested: PlainExtraData,
  sent: Record<string, unknown> | undefined,
): void {
  const moved = URL_FIELDS.some((field) => comparable(tested[field]) !== comparable(stored[field]));
  if (!moved) return;
  const errors: FieldErrors = {};
  for (const field of LLM_SECRET_FIELDS[provider]) {
    const value = sent?.[field];
    if (typeof value !== 'string' || isMaskedSecret(value)) errors[`extra_data.${field}`] = [SECRET_WITH_URL];
  }
  if (
    PAYLOAD in stored &&
    hasValues(stored[PAYLOAD]) &&
    !(sent && PAYLOAD in sent && !hasMask(sent[PAYLOAD]))
  )
    errors[`extra_data.${PAYLOAD}`] = [SECRET_WITH_URL];
  if (Object.keys(errors).length > 0) throw new ValidationError('a secret is missing', { errors });
}

function hasValues(value: unknown): boolean {
  if (typeof value === 'string' || typeof value === 'number') return true;
  if (Array.isArray(value)) return value.some(hasValues);
  if (value !== null && typeof value === 'object') return Object.values(value).some(hasValues);
  return false;
}

function hasMask(value: unknown): boolean {
  if (typeof value === 'string') return isMaskedSecret(value);
  if (Array.isArray(value)) return value.some(hasMask);
  if (value !== null && typeof value === 'object') return Object.values(value).some(hasMask);
  return false;
}
