import { isSecretFieldName, LLM_SECRET_FIELDS, type LlmProvider } from '@pack/contracts';
import { isMaskedSecret, maskSecret, SECRET_MASK } from '@pack/secrets';
import type { SecretCodec } from './model';

/** A decrypted secret that cannot be read (its key is gone) is null. */
export type PlainExtraData = Record<string, unknown>;

const PAYLOAD = 'request_payload';

/** What is stored: secrets sealed for this model, request_payload as JSON text. */
export function sealExtraData(
  codec: SecretCodec,
  modelId: number,
  provider: LlmProvider,
  plain: PlainExtraData,
): Record<string, unknown> {
  const stored: Record<string, unknown> = { ...plain };
  for (const field of LLM_SECRET_FIELDS[provider])
    if (typeof plain[field] === 'string') stored[field] = codec.seal(modelId, field, plain[field]);
  if (PAYLOAD in plain) stored[PAYLOAD] = JSON.stringify(plain[PAYLOAD]);
  return stored;
}

export function openExtraData(
  codec: SecretCodec,
  modelId: number,
  provider: LlmProvider,
  stored: Record<string, unknown>,
): PlainExtraData {
  const plain: PlainExtraData = { ...stored };
  for (const field of LLM_SECRET_FIELDS[provider])
    if (typeof stored[field] === 'string') plain[field] = codec.open(modelId, field, stored[field]);
  if (typeof stored[PAYLOAD] === 'string') plain[PAYLOAD] = JSON.parse(stored[PAYLOAD]) as unknown;
  return plain;
}

/**
 * What a reader sees. Admins get the last characters of a long enough secret (so they can tell
 * which key is stored), every other role the bare mask; an unreadable secret is the bare mask.
 */
export function maskExtraData(provider: LlmProvider, plain: PlainExtraData, admin: boolean): PlainExtraData {
  const view: PlainExtraData = { ...plain };
  for (const field of LLM_SECRET_FIELDS[provider]) {
    if (!(field in plain)) continue;
    const value = plain[field];
    view[field] = admin && typeof value === 'string' ? maskSecret(value) : SECRET_MASK;
  }
  if (PAYLOAD in plain) view[PAYLOAD] = maskNested(plain[PAYLOAD], admin);
  return view;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * genai's request_payload is free JSON whose values may be secrets under any name
 * (`Ocp-Apim-Subscription-Key`, `passwd`, a `session`): every role but admin gets every string
 * and number in it masked, keys and structure kept. Admins get the value under a secret-named
 * key (a `token`, an `authorization` header) masked like the named secrets.
 */
export function maskNested(value: unknown, admin: boolean): unknown {
  if (!admin) return maskValues(value);
  if (Array.isArray(value)) return value.map((item) => maskNested(item, admin));
  if (!isRecord(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      isSecretFieldName(key) && typeof item === 'string' && item !== ''
        ? admin
          ? maskSecret(item)
          : SECRET_MASK
        : maskNested(item, admin),
    ]),
  );
}

/** Every string and number at any depth replaced by the mask; keys, booleans and nulls kept. */
export function maskValues(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskValues);
  if (isRecord(value))
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskValues(item)]));
  return typeof value === 'string' || typeof value === 'number' ? SECRET_MASK : value;
}

/** A create or change body as the log may show it: request_payload values masked (the logger redacts named secrets). */
export function loggableChange<T extends { extra_data?: unknown }>(body: T): T {
  const extra = body.extra_data;
  if (!isRecord(extra) || !(PAYLOAD in extra)) return body;
  return { ...body, extra_data: { ...extra, [PAYLOAD]: maskValues(extra[PAYLOAD]) } };
}

/**
 * `sent` with each masked value under a secret-named key replaced by the stored value at the same
 * path; the paths (from `at`) where nothing is stored to keep go to `missing`.
 */
export function keepNestedSecrets(sent: unknown, stored: unknown, at: string, missing: string[]): unknown {
  if (Array.isArray(sent))
    return sent.map((item, index) =>
      keepNestedSecrets(item, Array.isArray(stored) ? stored[index] : undefined, `${at}.${index}`, missing),
    );
  if (!isRecord(sent)) return sent;
  const before = isRecord(stored) ? stored : {};
  return Object.fromEntries(
    Object.entries(sent).map(([key, item]) => {
      const where = `${at}.${key}`;
      if (!(isSecretFieldName(key) && typeof item === 'string' && isMaskedSecret(item)))
        return [key, keepNestedSecrets(item, before[key], where, missing)];
      if (typeof before[key] === 'string') return [key, before[key]];
      missing.push(where);
      return [key, item];
    }),
  );
}
