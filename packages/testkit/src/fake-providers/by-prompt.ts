import type { FakeReply, RecordedRequest } from './recorded';

/** Chooses a generation's reply from its prompt; undefined leaves it to the scripted and standing replies. */
export type Responder = (prompt: string, request: RecordedRequest) => FakeReply | undefined;

/**
 * Every text of a request body (messages, system prompts, parts), in order, one per line: the
 * prompt whatever the protocol's shape, as the model would read it (no JSON escaping).
 */
export function promptText(request: RecordedRequest): string {
  const texts: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') texts.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(request.body);
  return texts.join('\n');
}

/** A reply given when the prompt holds every one of `when` (plain substrings). */
export interface PromptRule {
  when: readonly string[];
  reply: string | FakeReply;
}

/**
 * A scripted model that reads its prompt: the first rule whose substrings all appear answers. Put
 * the most demanding rule first, e.g. a CONFIG that answers wrongly until its prompt holds the
 * earlier configuration and the error, then rightly.
 */
export function byPrompt(rules: readonly PromptRule[]): Responder {
  return (prompt) => {
    const rule = rules.find((candidate) => candidate.when.every((part) => prompt.includes(part)));
    if (!rule) return undefined;
    return typeof rule.reply === 'string' ? { text: rule.reply } : rule.reply;
  };
}
