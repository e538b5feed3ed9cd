import { request, type Dispatcher } from 'undici';
import { parseRetryAfter } from '@pack/reliability';
import {
  ProviderCancelledError,
  ProviderErrorBodyError,
  ProviderHttpError,
  ProviderInvalidResponseError,
  ProviderNetworkError,
  ProviderTimeoutError,
  plainCode,
  scrub,
  type ProviderError,
} from './errors';
import { Redactor } from './redact';
import { refusesStructuredOutput } from './structured-refusal';

export type Json = Record<string, unknown>;

/**
 * One generate call: a single deadline over every request it makes (token fetch, polling
 * included), the caller's signal, where to connect, and the secrets no message may contain.
 */
export class CallContext {
  readonly signal: AbortSignal;
  private readonly deadline = new AbortController();
  private readonly endsAt: number;
  private readonly timer: NodeJS.Timeout;
  private readonly startedAt = performance.now();
  /** Removes every secret of the call (those added later, like an access token, included). */
  readonly redactor: Redactor;

  constructor(
    readonly timeoutSeconds: number,
    secrets: Iterable<string>,
    readonly dispatcher: Dispatcher | undefined,
    private readonly userSignal?: AbortSignal,
  ) {
    this.redactor = new Redactor(secrets);
    const ms = timeoutSeconds * 1000;
    this.endsAt = Date.now() + ms;
    this.timer = setTimeout(() => this.deadline.abort(), ms);
    this.signal = userSignal ? AbortSignal.any([this.deadline.signal, userSignal]) : this.deadline.signal;
  }

  remainingMs(): number {
    return Math.max(1, this.endsAt - Date.now());
  }

  elapsedMs(): number {
    return Math.round(performance.now() - this.startedAt);
  }

  /** A secret learnt during the call (an access token): removed from messages from now on. */
  addSecret(secret: string): void {
    this.redactor.add(secret);
  }

  /** `text` without any secret of the call, cut to a message's length. */
  scrub(text: string): string {
    return scrub(text, this.redactor);
  }

  dispose(): void {
    clearTimeout(this.timer);
  }

  /** The typed error for a failure below HTTP (connect, reset, abort, undici timeouts). */
  failure(err: unknown, what: string): Error {
    if (this.userSignal?.aborted) return new ProviderCancelledError(`${what}: cancelled by the caller`);
    const code = (err as { code?: unknown } | null | undefined)?.code;
    if (this.deadline.signal.aborted || (typeof code === 'string' && /TIMEOUT/.test(code)))
      return new ProviderTimeoutError(`${what}: no complete answer within ${this.timeoutSeconds}s`);
    const refused = targetRefusal(err);
    if (refused)
      return new ProviderNetworkError(
        this.scrub(`${what}: ${refused.message}`),
        'TARGET_REFUSED',
        refused.reason,
      );
    const reason = typeof code === 'string' ? code : err instanceof Error ? err.message : String(err);
    return new ProviderNetworkError(
      this.scrub(`${what}: ${reason}`),
      typeof code === 'string' ? code : undefined,
    );
  }

  /** Waits ms unless the deadline or the caller ends the call first. */
  async sleep(ms: number, what: string): Promise<void> {
    if (this.signal.aborted) throw this.failure(this.signal.reason, what);
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(this.failure(this.signal.reason, what));
      };
      const timer = setTimeout(() => {
        this.signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/**
 * The URL guard's refusal (net-guard's TargetRefusedError, possibly wrapped by undici): its
 * message names the host and the rule, so a refusal never reads as a bare TARGET_REFUSED.
 */
function targetRefusal(err: unknown): { message: string; reason: string } | undefined {
  for (
    let e = err, depth = 0;
    e && typeof e === 'object' && depth < 4;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const candidate = e as { code?: unknown; message?: unknown; reason?: unknown; remedy?: unknown };
    if (candidate.code === 'TARGET_REFUSED' && typeof candidate.message === 'string') {
      if (typeof candidate.reason !== 'string')
        return { message: candidate.message, reason: candidate.message };
      // The reason and what to set, where: a pipeline's owner can pass it on to an operator.
      const remedy = typeof candidate.remedy === 'string' ? `; ${candidate.remedy}` : '';
      return { message: candidate.message, reason: `${candidate.reason}${remedy}` };
    }
  }
  return undefined;
}

export interface JsonRequest {
  method?: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  /** Sent as application/x-www-form-urlencoded instead of a JSON body (OAuth2 token requests). */
  form?: Record<string, string>;
  /** Names the request in error messages ("token request", "chat completion"). */
  what: string;
  dispatcher?: Dispatcher;
}

/**
 * Sends one request within the call's deadline and returns the JSON object of a 2xx answer.
 * Anything else is a typed error: a non-2xx status with the provider's message, an error object
 * in a 2xx, a body that is not JSON or was cut off.
 */
export async function requestJson(ctx: CallContext, req: JsonRequest): Promise<Json> {
  const remaining = ctx.remainingMs();
  let res: Dispatcher.ResponseData;
  try {
    res = await request(req.url, {
      method: req.method ?? 'POST',
      headers: req.form
        ? { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...req.headers }
        : req.body === undefined
          ? req.headers
          : { 'content-type': 'application/json', ...req.headers },
      body: req.form
        ? new URLSearchParams(req.form).toString()
        : req.body === undefined
          ? undefined
          : JSON.stringify(req.body),
      dispatcher: req.dispatcher ?? ctx.dispatcher,
      signal: ctx.signal,
      headersTimeout: remaining,
      bodyTimeout: remaining,
    });
  } catch (err) {
    throw ctx.failure(err, req.what);
  }
  let text: string;
  try {
    text = await res.body.text();
  } catch (err) {
    const failure = ctx.failure(err, req.what);
    if (failure instanceof ProviderNetworkError)
      throw new ProviderInvalidResponseError(`${req.what}: the response body was cut off`);
    throw failure;
  }
  const json = parseJson(text);
  if (res.statusCode < 200 || res.statusCode >= 300) {
    const detail = json ? errorMessageOf(json) : undefined;
    // Secrets out first, then the cut: a cut must never leave a partial secret behind.
    const message = `${req.what}: HTTP ${res.statusCode}${detail ? `: ${detail}` : text ? `: ${excerpt(ctx, text, 120)}` : ''}`;
    throw withCode(
      new ProviderHttpError(
        ctx.scrub(message),
        res.statusCode,
        retryAfterOf(res.headers),
        refusesStructuredOutput(res.statusCode, text),
      ),
      ctx,
      json,
    );
  }
  if (!json) {
    const type = String(res.headers['content-type'] ?? 'none');
    throw new ProviderInvalidResponseError(
      ctx.scrub(
        `${req.what}: the response is not a JSON object (content-type ${type}): ${excerpt(ctx, text, 80)}`,
      ),
    );
  }
  const inBody = errorMessageOf(json);
  if (inBody !== undefined)
    throw withCode(
      new ProviderErrorBodyError(ctx.scrub(`${req.what}: error in a ${res.statusCode} answer: ${inBody}`)),
      ctx,
      json,
    );
  return json;
}

function excerpt(ctx: CallContext, text: string, max: number): string {
  const clean = ctx.redactor.redact(text);
  return clean.length > max ? clean.slice(0, max) : clean;
}

/** Attaches the provider's error code, when it is a plain code that holds no secret. */
function withCode<E extends ProviderError>(error: E, ctx: CallContext, json: Json | undefined): E {
  const code = json ? errorCodeOf(json) : undefined;
  if (code !== undefined && ctx.redactor.redact(code) === code) error.providerCode = code;
  return error;
}

function errorCodeOf(json: Json): string | undefined {
  const error = json.error;
  if (typeof error === 'string') return plainCode(error);
  if (error && typeof error === 'object') {
    const e = error as Json;
    return plainCode(e.code) ?? plainCode(e.status) ?? plainCode(e.type);
  }
  return undefined;
}

function parseJson(text: string): Json | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The error object every supported provider uses: OpenAI and Gemini `{error: {message, ...}}`,
 * Anthropic `{type: 'error', error: {type, message}}`; some gateways send a plain string.
 */
function errorMessageOf(json: Json): string | undefined {
  const error = json.error;
  if (typeof error === 'string' && error) return error;
  if (error && typeof error === 'object') {
    const e = error as Json;
    const label = [e.type, e.status, e.code].find((v) => typeof v === 'string' && v) as string | undefined;
    // Whole: the caller removes the secrets before it cuts the message.
    const message = typeof e.message === 'string' ? e.message : JSON.stringify(e);
    return label ? `${label}: ${message}` : message;
  }
  if (json.type === 'error') return typeof json.message === 'string' ? json.message : 'error';
  return undefined;
}

function retryAfterOf(headers: Record<string, string | string[] | undefined>): number | undefined {
  return parseRetryAfter(headers['retry-after']) ?? undefined;
}

/** A non-negative integer from a usage field, 0 when absent. */
export function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path}`;
}
