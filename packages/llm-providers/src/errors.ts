/**
 * Provider failures by kind, so callers decide on retries and HTTP answers (502 vs 504) from the
 * class, never from message text. Messages are scrubbed of every secret of the call.
 */
export type ProviderErrorKind =
  'timeout' | 'cancelled' | 'network' | 'http_status' | 'error_body' | 'empty_output' | 'invalid_response';

export abstract class ProviderError extends Error {
  abstract readonly kind: ProviderErrorKind;
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export class ProviderTimeoutError extends ProviderError {
  readonly kind = 'timeout';
}
export class ProviderCancelledError extends ProviderError {
  readonly kind = 'cancelled';
}
export class ProviderNetworkError extends ProviderError {
  readonly kind = 'network';
  constructor(
    message: string,
    /** The connection error's code, e.g. ECONNREFUSED, or TARGET_REFUSED from the URL guard. */
    readonly code?: string,
  ) {
    super(message);
  }
}
export class ProviderHttpError extends ProviderError {
  readonly kind = 'http_status';
  constructor(
    message: string,
    readonly status: number,
    /** Seconds from a Retry-After header, when the provider sent one. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}
/** A 2xx whose body is an error, a failed or expired run, or a blocked prompt. */
export class ProviderErrorBodyError extends ProviderError {
  readonly kind = 'error_body';
}
export class ProviderEmptyOutputError extends ProviderError {
  readonly kind = 'empty_output';
}
/** Not JSON (HTML, garbage), a body cut off, or JSON without the expected shape. */
export class ProviderInvalidResponseError extends ProviderError {
  readonly kind = 'invalid_response';
}

const MAX_MESSAGE = 300;

/** Removes every secret (and its URL-encoded form) from text meant for an error message. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) out = out.split(form).join('***');
  }
  return out.length > MAX_MESSAGE ? `${out.slice(0, MAX_MESSAGE)}…` : out;
}
