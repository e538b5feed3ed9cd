import { ProviderEmptyOutputError, ProviderInvalidResponseError } from './errors';
import { count, joinUrl, requestJson, type CallContext, type Json } from './http';
import type { GenerateRequest, Usage } from './types';

export interface Vendor2Config {
  api_key: string;
  /** null: the provider's default endpoint. */
  base_url: string | null;
}

/** The endpoint of a model whose extra_data.base_url is null. */
export const VENDOR2_DEFAULT_BASE_URL = 'https://api.anthropic.com';

/**
 * Messages API requires max_tokens; this is the budget when the caller sets none (the
 * llm-gateway always sends the model's `max_output_tokens`): long enough for a configuration.
 */
const DEFAULT_MAX_TOKENS = 4096;

/** Anthropic Messages. */
export async function vendor2Generate(ctx: CallContext, config: Vendor2Config, req: GenerateRequest) {
  const system = req.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n\n');
  const body: Record<string, unknown> = {
    model: req.model,
    max_tokens: req.maxOutputTokens ?? DEFAULT_MAX_TOKENS,
    messages: req.messages.filter((m) => m.role !== 'system').map(({ role, content }) => ({ role, content })),
  };
  if (system) body.system = system;
  const what = 'messages request';
  const json = await requestJson(ctx, {
    url: joinUrl(config.base_url || VENDOR2_DEFAULT_BASE_URL, '/v1/messages'),
    headers: { 'x-api-key': config.api_key, 'anthropic-version': '2023-06-01' },
    body,
    what,
  });
  if (!Array.isArray(json.content))
    throw new ProviderInvalidResponseError(`${what}: the answer has no content`);
  const text = json.content
    .map((block) => {
      const b = (block ?? {}) as Json;
      return b.type === 'text' && typeof b.text === 'string' ? b.text : '';
    })
    .join('');
  if (!text.trim())
    throw new ProviderEmptyOutputError(
      `${what}: no text in the reply (stop_reason ${typeof json.stop_reason === 'string' ? json.stop_reason : 'none'})`,
    );
  return { text, usage: anthropicUsage(json.usage) };
}

/** input_tokens excludes cache reads and cache writes; both are billed as input. */
export function anthropicUsage(raw: unknown): Usage {
  const u = (raw ?? {}) as Json;
  const cacheRead = count(u.cache_read_input_tokens);
  const usage: Usage = {
    input_tokens: count(u.input_tokens) + cacheRead + count(u.cache_creation_input_tokens),
    output_tokens: count(u.output_tokens),
    raw: raw ?? null,
  };
  if (u.cache_read_input_tokens !== undefined) usage.cached_input_tokens = cacheRead;
  return usage;
}
