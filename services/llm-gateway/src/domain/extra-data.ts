import { LLM_SECRET_FIELDS, type LlmProvider } from '@pack/contracts';
import { maskSecret, SECRET_MASK } from '@pack/secrets';
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
  return view;
}
