import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { ErrorRequestHandler } from 'express';
import type { Logger } from '@pack/logging';
import { AppError, PayloadTooLargeError, UnsupportedMediaTypeError } from './errors';
import { PROBLEM_CONTENT_TYPE, problemType, type Problem } from './problem';

/** Writes a problem+json answer with the plain node API (express and non-express paths alike). */
export function sendProblem(
  res: ServerResponse,
  problem: Problem,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(problem);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.statusCode = problem.status;
  res.setHeader('content-type', `${PROBLEM_CONTENT_TYPE}; charset=utf-8`);
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(body);
}

function toAppError(
  error: unknown,
  mapError?: (error: unknown) => AppError | undefined,
): AppError | undefined {
  if (error instanceof AppError) return error;
  const mapped = mapError?.(error);
  if (mapped) return mapped;
  if (isBodyParserError(error)) {
    if (error.type === 'entity.too.large')
      return new PayloadTooLargeError(`request body exceeds ${error.limit} bytes`);
    if (error.type === 'charset.unsupported' || error.type === 'encoding.unsupported')
      return new UnsupportedMediaTypeError(error.message);
  }
  return undefined;
}

/** Answers an error as problem+json: taxonomy errors as they are, anything else as a 500 with an error id. */
export function respondWithError(
  error: unknown,
  res: ServerResponse,
  instance: string,
  logger: Logger,
  mapError?: (error: unknown) => AppError | undefined,
): void {
  if (res.headersSent) {
    logger.error({ err: error }, 'error after response started');
    res.destroy();
    return;
  }
  const appError = toAppError(error, mapError);
  if (appError) {
    if (appError.status >= 500) logger.warn({ err: appError, cause: appError.cause }, appError.detail);
    sendProblem(
      res,
      {
        type: problemType(appError.code),
        title: appError.title,
        status: appError.status,
        detail: appError.detail,
        instance,
        ...(appError.errors ? { errors: appError.errors } : {}),
      },
      appError.headers,
    );
    return;
  }
  const errorId = randomUUID();
  logger.error({ err: error, error_id: errorId }, 'unexpected error');
  sendProblem(res, {
    type: problemType('internal_error'),
    title: 'Internal server error',
    status: 500,
    detail: `An unexpected error occurred; quote error id ${errorId} when reporting it.`,
    instance,
    error_id: errorId,
  });
}

export function errorHandler(
  logger: Logger,
  mapError?: (error: unknown) => AppError | undefined,
): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => respondWithError(error, res, req.originalUrl, logger, mapError);
}

function isBodyParserError(error: unknown): error is { type: string; limit?: number; message: string } {
  return (
    typeof error === 'object' && error !== null && typeof (error as { type?: unknown }).type === 'string'
  );
}
