import { bearerRejected, openAiError } from './openai';
import {
  FakeProviderServer,
  fakeId,
  headerOf,
  type FakeReply,
  type RecordedRequest,
  type Reply,
} from './server';

export interface RunScript {
  /** Polls answered "in_progress" before the run ends. */
  pollsBeforeEnd: number;
  status: 'completed' | 'failed' | 'expired' | 'cancelled';
  lastError?: { code: string; message: string };
}

/** The model of the fake's assistant, which a run uses unless its request names another. */
export const FAKE_ASSISTANT_MODEL = 'gpt-4o';

interface Run {
  id: string;
  thread_id: string;
  assistant_id: string;
  model: string;
  polls: number;
  created_at: number;
}

/**
 * Assistants v2 (threads, runs, messages) with a scripted run outcome. Faults apply to thread
 * creation, the first request of a generation. base_url is `${url}/v1`.
 */
export async function startFakeAssistants(options: { apiKey: string; assistantId: string }) {
  const runs = new Map<string, Run>();
  // The reply (scripted or standing) chosen when the thread was created: its run and messages answer it.
  const threadReplies = new Map<string, FakeReply>();
  const replyOf = (threadId: string) => threadReplies.get(threadId) ?? fake.reply;
  const script: RunScript = { pollsBeforeEnd: 2, status: 'completed' };

  const runObject = (run: Run, status: string) => ({
    id: run.id,
    object: 'thread.run',
    created_at: run.created_at,
    assistant_id: run.assistant_id,
    thread_id: run.thread_id,
    status,
    last_error:
      status === 'failed'
        ? (script.lastError ?? { code: 'server_error', message: 'Something went wrong.' })
        : null,
    model: run.model,
    usage:
      status === 'completed'
        ? (replyOf(run.thread_id).usage ?? { prompt_tokens: 30, completion_tokens: 9, total_tokens: 39 })
        : null,
  });

  const route = (req: RecordedRequest): Reply | 'generate' | undefined => {
    const rejected = bearerRejected(req, options.apiKey);
    if (rejected) return rejected;
    if (headerOf(req, 'openai-beta') !== 'assistants=v2')
      return {
        status: 400,
        body: openAiError(400, "You must provide the 'OpenAI-Beta' header to access the Assistants API."),
      };
    const path = req.path.split('?')[0] ?? '';
    if (req.method === 'POST' && path === '/v1/threads') return 'generate';
    let m = /^\/v1\/threads\/([^/]+)\/runs$/.exec(path);
    if (m && req.method === 'POST') {
      const body = (req.body ?? {}) as { assistant_id?: string; model?: unknown };
      if (body.assistant_id !== options.assistantId)
        return { status: 404, body: openAiError(404, `No assistant found with id '${body.assistant_id}'.`) };
      const run = {
        id: fakeId('run_'),
        thread_id: m[1]!,
        assistant_id: body.assistant_id,
        // Assistants v2: a run's `model` overrides the assistant's own.
        model: typeof body.model === 'string' && body.model ? body.model : FAKE_ASSISTANT_MODEL,
        polls: 0,
        created_at: Date.now(),
      };
      runs.set(run.id, run);
      return { status: 200, body: runObject(run, 'queued') };
    }
    m = /^\/v1\/threads\/([^/]+)\/runs\/([^/]+)$/.exec(path);
    if (m && req.method === 'GET') {
      const run = runs.get(m[2]!);
      if (!run) return { status: 404, body: openAiError(404, 'No run found.') };
      run.polls += 1;
      return {
        status: 200,
        body: runObject(run, run.polls > script.pollsBeforeEnd ? script.status : 'in_progress'),
      };
    }
    m = /^\/v1\/threads\/([^/]+)\/messages$/.exec(path);
    if (m && req.method === 'GET') {
      const text = replyOf(m[1]!).text;
      const content = text ? [{ type: 'text', text: { value: text, annotations: [] } }] : [];
      const message = {
        id: fakeId('msg_'),
        object: 'thread.message',
        thread_id: m[1]!,
        role: 'assistant',
        content,
      };
      return {
        status: 200,
        body: { object: 'list', data: [message], first_id: message.id, last_id: message.id, has_more: false },
      };
    }
    return undefined;
  };

  const fake = new FakeProviderServer({
    route,
    success: (_req, reply) => {
      const id = fakeId('thread_');
      threadReplies.set(id, reply);
      return { id, object: 'thread', created_at: Math.floor(Date.now() / 1000), metadata: {} };
    },
    // A thread without an id: the client cannot go on.
    empty: () => ({ object: 'thread' }),
    error: openAiError,
  });
  await fake.start();
  return Object.assign(fake, {
    script,
    pollsOf: (runId: string) => runs.get(runId)?.polls ?? 0,
    /** The model each run was made with, in order. */
    runModels: () => [...runs.values()].map((run) => run.model),
  });
}
