import { FakeProviderServer, fakeId, headerOf } from './server';

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

/** Anthropic's error body: `{type: 'error', error: {type, message}}`. */
export function anthropicError(status: number, message: string) {
  return { type: 'error', error: { type: ERROR_TYPES[status] ?? 'api_error', message } };
}

/** Anthropic Messages; base_url is the server's url. */
export async function startFakeAnthropic(options: { apiKey: string }) {
  const fake = new FakeProviderServer({
    route: (req) => {
      if (req.method !== 'POST' || req.path !== '/v1/messages') return undefined;
      if (headerOf(req, 'x-api-key') !== options.apiKey)
        return { status: 401, body: anthropicError(401, 'invalid x-api-key') };
      if (headerOf(req, 'anthropic-version') !== '2023-06-01')
        return { status: 400, body: anthropicError(400, 'anthropic-version: header is required') };
      return 'generate';
    },
    success: (req, reply) =>
      message(req.body, reply.text ? [{ type: 'text', text: reply.text }] : [], reply.usage),
    empty: (req) => message(req.body, [], undefined, 'max_tokens'),
    error: anthropicError,
  });
  return fake.start();
}

function message(
  body: unknown,
  content: unknown[],
  usage?: Record<string, unknown>,
  stopReason = 'end_turn',
) {
  return {
    id: fakeId('msg_'),
    type: 'message',
    role: 'assistant',
    model: (body as { model?: string } | undefined)?.model ?? 'claude-sonnet-4-5',
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: usage ?? {
      input_tokens: 12,
      output_tokens: 7,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
}
