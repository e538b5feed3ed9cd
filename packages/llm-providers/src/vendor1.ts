import { joinUrl, requestJson, type CallContext } from './http';
import { readChatCompletion } from './openai-shape';
import type { GenerateRequest } from './types';

/** The endpoint of a model whose extra_data.base_url is null. */
export const VENDOR1_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface Vendor1Config {
  api_key: string;
  /** null: the provider's default endpoint. */
  base_url: string | null;
}

/** OpenAI-compatible Chat Completions. */
export async function vendor1Generate(
  ctx: CallContext,
  config: Vendor1Config,
  req: GenerateRequest,
  responseFormat?: Record<string, unknown>,
) {
  const body: Record<string, unknown> = { model: req.model, messages: req.messages };
  // max_tokens is deprecated by OpenAI and refused by its reasoning models.
  if (req.maxOutputTokens !== undefined) body.max_completion_tokens = req.maxOutputTokens;
  if (responseFormat) body.response_format = responseFormat;
  const what = 'chat completion';
  const json = await requestJson(ctx, {
    url: joinUrl(config.base_url || VENDOR1_DEFAULT_BASE_URL, '/chat/completions'),
    headers: { authorization: `Bearer ${config.api_key}` },
    body,
    what,
  });
  return readChatCompletion(json, what);
}
