/**
 * Errors of the API (RFC 9457 problem+json) in words a person reads, with the fields they
 * concern. Pure: no DOM, no fetch (problem.spec.ts).
 */
export interface Problem {
  title?: string;
  status?: number;
  detail?: string;
  errors?: Record<string, string[]>;
  error_id?: string;
}

const BY_STATUS: Record<number, string> = {
  400: 'The request was not accepted.',
  401: 'Your token was not accepted: sign in again.',
  403: 'You are not allowed to do this.',
  404: 'Not found (or not one of yours).',
  409: 'This conflicts with the current state.',
  413: 'What you sent is too large.',
  415: 'The request was not sent as JSON.',
  429: 'Too many requests: wait a moment and try again.',
  502: 'A service behind the gateway failed to answer.',
  503: 'A service behind the gateway is unavailable; try again shortly.',
  504: 'A service behind the gateway did not answer in time.',
};

function isProblem(value: unknown): value is Problem {
  return typeof value === 'object' && value !== null && ('title' in value || 'detail' in value);
}

/** An API call that did not succeed: status 0 means the gateway could not be reached at all. */
export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem;
  readonly retryAfter?: number;

  constructor(status: number, body: unknown, retryAfter?: string | null) {
    const problem: Problem = isProblem(body) ? body : {};
    super(describe(status, problem));
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem;
    const seconds = Number(retryAfter);
    if (retryAfter && Number.isFinite(seconds)) this.retryAfter = seconds;
  }

  /** Messages about one field (`extra_data.base_url`), or about anything under it. */
  fieldErrors(field: string): string[] {
    return Object.entries(this.problem.errors ?? {})
      .filter(([path]) => path === field || path.startsWith(`${field}.`))
      .flatMap(([path, messages]) =>
        messages.map((message) => (path === field ? message : `${path}: ${message}`)),
      );
  }

  /** Field errors about none of `shown` (the fields a form has), so the form lists them itself. */
  otherFieldErrors(shown: readonly string[]): string[] {
    return Object.entries(this.problem.errors ?? {})
      .filter(([path]) => !shown.some((field) => path === field || path.startsWith(`${field}.`)))
      .flatMap(([path, messages]) => messages.map((message) => `${path}: ${message}`));
  }
}

/** One sentence or two: what the platform said, else what the status means. */
export function describe(status: number, problem: Problem): string {
  if (status === 0) return 'The gateway cannot be reached: check your connection and try again.';
  const general =
    BY_STATUS[status] ??
    (status >= 500 ? 'The platform failed to answer.' : `The request failed (HTTP ${status}).`);
  const detail = problem.detail?.trim();
  const said = detail && detail !== problem.title ? detail : problem.title;
  const reference = problem.error_id ? ` (error id ${problem.error_id})` : '';
  if (!said) return general + reference;
  return `${said.endsWith('.') ? said : `${said}.`}${reference}`;
}
