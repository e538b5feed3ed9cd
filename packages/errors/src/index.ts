/**
 * One error taxonomy for every service. Use cases and handlers throw these; the HTTP layer
 * (@pack/http-kit) turns them into RFC 9457 problem+json. Anything else is unexpected and becomes
 * a 500 with an error id. This package depends on nothing, so domain code can throw a 404 or a
 * 409 without loading a web framework.
 */
export type FieldErrors = Record<string, string[]>;

export interface AppErrorOptions {
  detail?: string;
  errors?: FieldErrors;
  cause?: unknown;
  headers?: Record<string, string>;
}

export class AppError extends Error {
  readonly detail: string;
  readonly errors?: FieldErrors;
  readonly headers?: Record<string, string>;

  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    options: AppErrorOptions = {},
  ) {
    super(options.detail ?? title, { cause: options.cause });
    this.name = new.target.name;
    this.detail = options.detail ?? title;
    this.errors = options.errors;
    this.headers = options.headers;
  }
}

const define = (status: number, code: string, title: string) =>
  class extends AppError {
    constructor(detail?: string, options: Omit<AppErrorOptions, 'detail'> = {}) {
      super(status, code, title, { ...options, detail: detail ?? title });
    }
  };

export class ValidationError extends define(400, 'validation_failed', 'Invalid request') {}
export class BadRequestError extends define(400, 'bad_request', 'Bad request') {}
export class UnauthorizedError extends define(401, 'unauthorized', 'Authentication required') {}
export class ForbiddenError extends define(403, 'forbidden', 'Forbidden') {}
export class NotFoundError extends define(404, 'not_found', 'Not found') {}
export class MethodNotAllowedError extends define(405, 'method_not_allowed', 'Method not allowed') {}
export class ConflictError extends define(409, 'conflict', 'Conflict') {}
export class PayloadTooLargeError extends define(413, 'payload_too_large', 'Payload too large') {}
export class UnsupportedMediaTypeError extends define(
  415,
  'unsupported_media_type',
  'Unsupported media type',
) {}
export class TooManyRequestsError extends define(429, 'too_many_requests', 'Too many requests') {}
export class BadGatewayError extends define(502, 'bad_gateway', 'Bad gateway') {}
export class ServiceUnavailableError extends define(503, 'service_unavailable', 'Service unavailable') {}
export class GatewayTimeoutError extends define(504, 'gateway_timeout', 'Gateway timeout') {}
