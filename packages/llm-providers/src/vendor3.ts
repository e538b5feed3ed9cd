import { ProviderEmptyOutputError, ProviderErrorBodyError, ProviderInvalidResponseError } from './errors';
import { count, joinUrl, requestJson, type CallContext, type Json } from './http';
import type { GenerateRequest, Usage } from './types';

export interface Vendor3Config {
  api_key: string;
  base_url?: string | null;
}

export const GEMINI_DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';

/** Reasons that end a candidate normally; any other one means the output was withheld. */
const NORMAL_FINISH = new Set(['STOP', 'MAX_TOKENS', 'FINISH_REASON_UNSPECIFIED']);

/** Google Gemini generateContent. */
export async function vendor3Generate(
  ctx: CallContext,
  config: Vendor3Config,
  req: GenerateRequest,
  responseSchema?: Record<string, unknown>,
) {
  // Gemini refuses an empty text part (400 INVALID_ARGUMENT): a blank system text says nothing.
  const system = req.messages
    .filter((m) => m.role === 'system' && m.content.trim() !== '')
    .map((m) => ({ text: m.content }));
  const body: Record<string, unknown> = {
    contents: req.messages
      .filter((m) => m.role !== 'system')
      .map((m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: [{ text: m.content }] })),
  };
  if (system.length) body.systemInstruction = { parts: system };
  const generationConfig: Record<string, unknown> = {};
  if (req.maxOutputTokens !== undefined) generationConfig.maxOutputTokens = req.maxOutputTokens;
  if (responseSchema)
    Object.assign(generationConfig, { responseMimeType: 'application/json', responseSchema });
  if (Object.keys(generationConfig).length) body.generationConfig = generationConfig;
  const model = encodeURIComponent(req.model.replace(/^models\//, ''));
  const what = 'generateContent';
  const json = await requestJson(ctx, {
    url: joinUrl(config.base_url || GEMINI_DEFAULT_BASE_URL, `/v1beta/models/${model}:generateContent`),
    headers: { 'x-goog-api-key': config.api_key },
    body,
    what,
  });
  const feedback = (json.promptFeedback ?? {}) as Json;
  if (typeof feedback.blockReason === 'string')
    throw new ProviderErrorBodyError(`${what}: the prompt was blocked (${feedback.blockReason})`);
  if (json.candidates !== undefined && !Array.isArray(json.candidates))
    throw new ProviderInvalidResponseError(`${what}: candidates is not a list`);
  const candidate = ((json.candidates as unknown[] | undefined)?.[0] ?? {}) as Json;
  const finish = typeof candidate.finishReason === 'string' ? candidate.finishReason : undefined;
  if (finish && !NORMAL_FINISH.has(finish))
    throw new ProviderErrorBodyError(`${what}: generation stopped (finishReason ${finish})`);
  const parts = ((candidate.content ?? {}) as Json).parts;
  const text = (Array.isArray(parts) ? parts : [])
    .map((part) => {
      const p = (part ?? {}) as Json;
      // Thought summaries are not the answer.
      return p.thought !== true && typeof p.text === 'string' ? p.text : '';
    })
    .join('');
  if (!text.trim())
    throw new ProviderEmptyOutputError(`${what}: no text in the reply (finishReason ${finish ?? 'none'})`);
  return { text, usage: geminiUsage(json.usageMetadata) };
}

/**
 * promptTokenCount includes cached content; candidatesTokenCount excludes thinking, which is
 * billed as output; tool-use prompt tokens are billed as input.
 */
export function geminiUsage(raw: unknown): Usage {
  const u = (raw ?? {}) as Json;
  const thoughts = count(u.thoughtsTokenCount);
  const usage: Usage = {
    input_tokens: count(u.promptTokenCount) + count(u.toolUsePromptTokenCount),
    output_tokens: count(u.candidatesTokenCount) + thoughts,
    raw: raw ?? null,
  };
  if (u.cachedContentTokenCount !== undefined) usage.cached_input_tokens = count(u.cachedContentTokenCount);
  if (u.thoughtsTokenCount !== undefined) usage.reasoning_tokens = thoughts;
  return usage;
}
