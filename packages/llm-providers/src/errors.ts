import { redactAndCut, Redactor } from './redact';

/**
 * Provider failures by kind, so callers decide on retries and HTTP answers (502 vs 504) from the
 * class, never from message text. Messages are scrubbed of every secret of the call.
 */
export type ProviderErrorKind =
  'timeout' | 'cancelled' | 'network' | 'http_status' | 'error_body' | 'empty_output' | 'invalid_response';

export abstract class ProviderError extends Error {
  abstract readonly kind: ProviderErrorKind;
  /**
   * The provider's own error code or type ("invalid_api_key", "PERMISSION_DENIED"), when it sent
   * one that looks like a code; never free text.
   */
  providerCode?: string;
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
    /** Why the URL guard refused the address (TARGET_REFUSED only). */
    readonly refusal?: string,
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
    /** The answer refuses the structured-output parameter (structured-refusal.ts). */
    readonly refusesStructuredOutput = false,
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

/** Removes every secret, in every form and fragment (redact.ts), then cuts the text. */
export function scrub(text: string, secrets: readonly string[] | Redactor): string {
  const redactor = secrets instanceof Redactor ? secrets : new Redactor(secrets);
  return redactAndCut(text, redactor, MAX_MESSAGE);
}

/** A provider error code as shown to everyone: a short identifier, never text. */
export function plainCode(value: unknown): string | undefined {
  return typeof value === 'string' && /^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/.test(value) ? value : undefined;
}

/**
 * What a failure is, without a word of the provider's own text: for people who may not see the
 * provider's answer (service owners reading a pipeline stage's error), which may quote secrets.
 */
export function classifyProviderError(error: ProviderError): string {
  const code = error.providerCode ? ` (provider error code ${error.providerCode})` : '';
  return `${classification(error)}${code}`;
}

function classification(error: ProviderError): string {
  switch (error.kind) {
    case 'timeout':
      return 'the provider did not answer in time';
    case 'cancelled':
      return 'the call was cancelled';
    case 'network': {
      const network = error as ProviderNetworkError;
      if (network.code === 'TARGET_REFUSED')
        return `the platform refused to connect to the provider's address: ${network.refusal ?? 'refused'}`;
      return `the provider could not be reached${network.code && plainCode(network.code) ? ` (${network.code})` : ''}`;
    }
    case 'http_status': {
      const status = (error as ProviderHttpError).status;
      return `${statusClass(status)}, HTTP ${status}`;
    }
    case 'error_body':
      return 'the provider answered with an error';
    case 'empty_output':
      return 'the provider answered without text';
    case 'invalid_response':
      return 'the provider answer could not be read';
  }
}

function statusClass(status: number): string {
  if (status === 401 || status === 403) return 'the provider refused the credentials';
  if (status === 404) return 'the provider does not know the model or the address';
  if (status === 408) return 'the provider timed out';
  if (status === 429) return 'the provider limited the rate or the quota';
  if (status >= 500) return 'the provider failed';
  return 'the provider refused the request';
}
