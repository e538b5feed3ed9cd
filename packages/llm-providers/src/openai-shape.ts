import { ProviderEmptyOutputError, ProviderInvalidResponseError } from './errors';
import { count, type Json } from './http';
import type { Usage } from './types';

/** OpenAI usage: prompt_tokens include cached ones, completion_tokens include reasoning. */
export function openAiUsage(raw: unknown): Usage {
  const u = (raw ?? {}) as Json;
  const prompt = (u.prompt_tokens_details ?? {}) as Json;
  const completion = (u.completion_tokens_details ?? {}) as Json;
  const usage: Usage = {
    input_tokens: count(u.prompt_tokens),
    output_tokens: count(u.completion_tokens),
    raw: raw ?? null,
  };
  if (prompt.cached_tokens !== undefined) usage.cached_input_tokens = count(prompt.cached_tokens);
  if (completion.reasoning_tokens !== undefined) usage.reasoning_tokens = count(completion.reasoning_tokens);
  return usage;
}

/** The text and usage of a chat completion; no text (or a refusal) is a failure. */
export function readChatCompletion(json: Json, what: string): { text: string; usage: Usage } {
  const choices = json.choices;
  if (!Array.isArray(choices)) throw new ProviderInvalidResponseError(`${what}: the answer has no choices`);
  const choice = (choices[0] ?? {}) as Json;
  const message = (choice.message ?? {}) as Json;
  const text = contentText(message.content);
  if (!text.trim()) {
    const why =
      typeof message.refusal === 'string' && message.refusal
        ? `refused: ${message.refusal}`
        : `finish_reason ${typeof choice.finish_reason === 'string' ? choice.finish_reason : 'none'}`;
    throw new ProviderEmptyOutputError(`${what}: no text in the reply (${why})`);
  }
  return { text, usage: openAiUsage(json.usage) };
}

/** Content is a string, or (some compatible servers) an array of text parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => {
      const p = (part ?? {}) as Json;
      return p.type === 'text' && typeof p.text === 'string' ? p.text : '';
    })
    .join('');
}
