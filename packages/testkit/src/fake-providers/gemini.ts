import { FakeProviderServer, headerOf, type FakeReply } from './server';

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  503: 'UNAVAILABLE',
};

/** Google's error body: `{error: {code, message, status}}`. */
export function geminiError(status: number, message: string) {
  return { error: { code: status, message, status: STATUS_NAMES[status] ?? 'INTERNAL' } };
}

/** Gemini generateContent; base_url is the server's url. */
export async function startFakeGemini(options: { apiKey: string }) {
  const fake = new FakeProviderServer({
    route: (req) => {
      if (req.method !== 'POST' || !/^\/v1beta\/models\/[^/]+:generateContent$/.test(req.path))
        return undefined;
      // Gemini answers a bad key with 400 INVALID_ARGUMENT.
      if (headerOf(req, 'x-goog-api-key') !== options.apiKey)
        return { status: 400, body: geminiError(400, 'API key not valid. Please pass a valid API key.') };
      const empty = emptyPart(req.body);
      if (empty)
        return {
          status: 400,
          body: geminiError(
            400,
            `* GenerateContentRequest.${empty}.data: required oneof field 'data' must have one initialized field\n`,
          ),
        };
      return 'generate';
    },
    success: (req, reply) => generateContentResponse(reply, req.path),
    empty: (req) => generateContentResponse({ text: '' }, req.path, 'MAX_TOKENS'),
    error: geminiError,
  });
  return fake.start();
}

type Content = { parts?: { text?: unknown }[] };

/**
 * The first part without data, as Gemini names it: the API refuses a part whose text is empty
 * (a system instruction's included), whatever the rest of the request.
 */
function emptyPart(body: unknown): string | undefined {
  const request = (body ?? {}) as { systemInstruction?: Content; contents?: Content[] };
  const blank = (content: Content | undefined) =>
    (content?.parts ?? []).findIndex((part) => typeof part.text !== 'string' || part.text === '');
  const system = blank(request.systemInstruction);
  if (system !== -1) return `system_instruction.parts[${system}]`;
  for (const [index, content] of (request.contents ?? []).entries()) {
    const part = blank(content);
    if (part !== -1) return `contents[${index}].parts[${part}]`;
  }
  return undefined;
}

export function generateContentResponse(reply: FakeReply, path: string, finishReason = 'STOP') {
  const model = /models\/([^:]+):/.exec(path)?.[1] ?? 'gemini-2.5-flash';
  return {
    candidates: [
      {
        content: { parts: reply.text ? [{ text: reply.text }] : [], role: 'model' },
        finishReason,
        index: 0,
      },
    ],
    usageMetadata: reply.usage ?? { promptTokenCount: 12, candidatesTokenCount: 7, totalTokenCount: 19 },
    modelVersion: model,
    responseId: 'fake-response',
  };
}
