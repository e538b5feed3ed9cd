import { ProviderEmptyOutputError, ProviderErrorBodyError, ProviderInvalidResponseError } from './errors';
import { joinUrl, requestJson, type CallContext, type Json } from './http';
import { openAiUsage } from './openai-shape';
import type { GenerateRequest } from './types';

export interface AssistantConfig {
  VENDOR1_API_KEY: string;
  VENDOR1_ASSISTANT_ID: string;
  base_url?: string | null;
}

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';
const MAX_POLL_MS = 1000;
const ENDED = new Set(['completed', 'failed', 'expired', 'cancelled', 'incomplete', 'requires_action']);

/**
 * Assistants v2: a thread holding the conversation, a run of the assistant on it, polled until it
 * ends within the call's deadline, then the assistant's reply from the thread's messages.
 */
export async function assistantGenerate(
  ctx: CallContext,
  config: AssistantConfig,
  req: GenerateRequest,
  pollIntervalMs = 250,
) {
  const base = config.base_url || DEFAULT_BASE_URL;
  const headers = { authorization: `Bearer ${config.VENDOR1_API_KEY}`, 'OpenAI-Beta': 'assistants=v2' };
  const call = (what: string, path: string, body?: unknown) =>
    requestJson(ctx, {
      method: body === undefined ? 'GET' : 'POST',
      url: joinUrl(base, path),
      headers,
      body,
      what,
    });

  // Threads hold user and assistant turns only; system text becomes the run's extra instructions.
  const system = req.messages.filter((m) => m.role === 'system').map((m) => m.content);
  const thread = await call('create thread', '/threads', {
    messages: req.messages.filter((m) => m.role !== 'system').map(({ role, content }) => ({ role, content })),
  });
  const threadId = idOf(thread, 'create thread');
  // The profile's model_name overrides the assistant's own model (the run's `model`): the profile's
  // prices are those of the model that answers.
  const runBody: Record<string, unknown> = { assistant_id: config.VENDOR1_ASSISTANT_ID, model: req.model };
  if (system.length) runBody.additional_instructions = system.join('\n\n');
  // The run's own output budget field (Assistants API), as vendor1's chat completions.
  if (req.maxOutputTokens !== undefined) runBody.max_completion_tokens = req.maxOutputTokens;
  let run = await call('create run', `/threads/${threadId}/runs`, runBody);
  const runId = idOf(run, 'create run');

  let interval = pollIntervalMs;
  while (!ENDED.has(String(run.status))) {
    await ctx.sleep(interval, 'run poll');
    interval = Math.min(MAX_POLL_MS, interval * 2);
    run = await call('run poll', `/threads/${threadId}/runs/${runId}`);
  }
  if (run.status !== 'completed') {
    const lastError = (run.last_error ?? {}) as Json;
    const reason =
      typeof lastError.message === 'string'
        ? `: ${typeof lastError.code === 'string' ? lastError.code : 'error'}: ${lastError.message}`
        : run.incomplete_details
          ? `: ${JSON.stringify(run.incomplete_details)}`
          : '';
    throw new ProviderErrorBodyError(`assistant run ${String(run.status)}${reason}`);
  }

  const list = await call(
    'list messages',
    `/threads/${threadId}/messages?order=desc&run_id=${encodeURIComponent(runId)}`,
  );
  if (!Array.isArray(list.data))
    throw new ProviderInvalidResponseError('list messages: the answer has no data');
  const reply = (list.data as Json[]).find((m) => m?.role === 'assistant');
  const text = (Array.isArray(reply?.content) ? (reply.content as Json[]) : [])
    .map((block) => {
      const value = block?.type === 'text' ? ((block.text ?? {}) as Json).value : undefined;
      return typeof value === 'string' ? value : '';
    })
    .join('');
  if (!text.trim()) throw new ProviderEmptyOutputError('assistant run: no text in the reply');
  return { text, usage: openAiUsage(run.usage) };
}

function idOf(json: Json, what: string): string {
  if (typeof json.id !== 'string' || !json.id)
    throw new ProviderInvalidResponseError(`${what}: the answer has no id`);
  return encodeURIComponent(json.id);
}
