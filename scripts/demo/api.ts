/** The demo's way into the platform: the public API through the gateway, nothing else. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readLocalStack, stackFile } from '../lib/local-stack';

/** A failure the demo explains in one message and ends on (exit 1). */
export class DemoError extends Error {}

/** An answer of the public API; `body` is typed as the caller expects it on success (trusted, not checked). */
export interface Answer<T = unknown> {
  status: number;
  body: T;
}

const REPO = path.resolve(__dirname, '../..');
const DEFAULT_GATEWAY = 'http://127.0.0.1:8080';

/** PACK_GATEWAY_URL, else the gateway of the stack `pnpm start` runs (its port may not be 8080). */
export function gatewayUrl(env: NodeJS.ProcessEnv): string {
  return env.PACK_GATEWAY_URL || readLocalStack(stackFile(env))?.gateway || DEFAULT_GATEWAY;
}

/**
 * PACK_ADMIN_TOKEN, else the token the running `pnpm start` gave its gateway, else the one it
 * generated and kept in .local/dev.env.
 */
export function adminToken(env: NodeJS.ProcessEnv): string {
  if (env.PACK_ADMIN_TOKEN) return env.PACK_ADMIN_TOKEN;
  const running = readLocalStack(stackFile(env))?.adminToken;
  if (running) return running;
  const file = path.join(REPO, '.local/dev.env');
  const stored = existsSync(file)
    ? /^PACK_ADMIN_TOKEN=(.+)$/m.exec(readFileSync(file, 'utf8'))?.[1]
    : undefined;
  if (!stored)
    throw new DemoError(
      'no admin token: set PACK_ADMIN_TOKEN, or run `pnpm start` once (it keeps one in .local/dev.env)',
    );
  return stored;
}

export class Api {
  constructor(readonly gateway: string) {}

  async call<T = unknown>(
    method: string,
    route: string,
    token: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer<T>> {
    let response: Response;
    try {
      response = await fetch(new URL(route, this.gateway), {
        method,
        headers: {
          ...headers,
          authorization: `Token ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
    } catch (error) {
      throw new DemoError(
        `cannot reach the gateway at ${this.gateway} (${describe(error)}): is \`pnpm start\` running?`,
      );
    }
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: kept as text for the message
    }
    return { status: response.status, body: parsed as T };
  }

  /** A call that must answer `status`; anything else ends the demo naming the step. */
  async expect<T>(
    status: number,
    what: string,
    method: string,
    route: string,
    token: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<T> {
    const answer = await this.call<T>(method, route, token, body, headers);
    if (answer.status !== status)
      throw new DemoError(`${what}: ${method} ${route} answered ${problem(answer)}`);
    return answer.body;
  }

  /**
   * Creating something that names a resource another service learns by event (a Service, a
   * model) answers 400 on that field until the event arrived: retried while only `awaited`
   * fields are refused and the deadline allows.
   */
  async createOnceKnown<T>(
    what: string,
    route: string,
    token: string,
    body: unknown,
    awaited: string[],
    deadline: number,
  ): Promise<T> {
    for (;;) {
      const answer = await this.call<T>('POST', route, token, body);
      if (answer.status === 201) return answer.body;
      const fields = Object.keys((answer.body as { errors?: object } | null)?.errors ?? {});
      const waiting = answer.status === 400 && fields.length > 0 && fields.every((f) => awaited.includes(f));
      if (!waiting || Date.now() > deadline)
        throw new DemoError(`${what}: POST ${route} answered ${problem(answer)}`);
      await sleep(200);
    }
  }
}

export function problem(answer: Answer<unknown>): string {
  const body = answer.body as { detail?: string; title?: string; errors?: object } | string | null;
  let detail = typeof body === 'object' && body ? (body.detail ?? body.title) : body;
  if (typeof body === 'object' && body?.errors) detail = `${detail} ${JSON.stringify(body.errors)}`;
  return detail ? `${answer.status}: ${String(detail).slice(0, 400)}` : String(answer.status);
}

export function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
