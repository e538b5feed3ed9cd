import {
  FakeProviderServer,
  fakeId,
  headerOf,
  type FakeReply,
  type RecordedRequest,
  type Reply,
} from './server';

const OPENAI_ERROR_TYPES: Record<number, [string, string | null]> = {
  400: ['invalid_request_error', null],
  401: ['invalid_request_error', 'invalid_api_key'],
  404: ['invalid_request_error', 'model_not_found'],
  429: ['requests', 'rate_limit_exceeded'],
};

/** OpenAI's error body: `{error: {message, type, param, code}}`. */
export function openAiError(status: number, message: string) {
  const [type, code] = OPENAI_ERROR_TYPES[status] ?? ['server_error', null];
  return { error: { message, type, param: null, code } };
}

/** A chat.completion object as OpenAI documents it. */
export function chatCompletion(req: RecordedRequest, reply: FakeReply, content: string | null = reply.text) {
  const model = (req.body as { model?: string } | undefined)?.model ?? 'gpt-4o-mini';
  return {
    id: fakeId('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: reply.usage ?? {
      prompt_tokens: 12,
      completion_tokens: 7,
      total_tokens: 19,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
    },
    system_fingerprint: 'fp_fake',
  };
}

/** 401 with the supplied key in the message: some compatible servers echo it, callers must not. */
export function bearerRejected(req: RecordedRequest, expected: string): Reply | undefined {
  const auth = headerOf(req, 'authorization') ?? '';
  if (auth === `Bearer ${expected}`) return undefined;
  return {
    status: 401,
    body: openAiError(401, `Incorrect API key provided: ${auth.replace(/^Bearer /, '')}.`),
  };
}

/** OpenAI-compatible Chat Completions; base_url is `${url}/v1`. */
export async function startFakeOpenAi(options: { apiKey: string }) {
  const fake = new FakeProviderServer({
    route: (req) => {
      if (req.method !== 'POST' || req.path !== '/v1/chat/completions') return undefined;
      return bearerRejected(req, options.apiKey) ?? 'generate';
    },
    success: (req, reply) => chatCompletion(req, reply),
    empty: (req) => chatCompletion(req, { text: '' }, null),
    error: openAiError,
  });
  return fake.start();
}
