import { mongo } from 'mongoose';
import { ConflictError, ServiceUnavailableError, type AppError } from '@pack/errors';

/** What a client is told to wait before trying a write again while the database is away. */
export const DATABASE_RETRY_AFTER_S = 5;

/**
 * Server error codes that say the database cannot serve now, not that the request is wrong
 * (docs/decisions/0051). 1 (InternalError) is how FerretDB v1 reports every failure of its
 * PostgreSQL (a refused or dropped connection, "terminating connection due to administrator
 * command" while PostgreSQL restarts); the others are MongoDB's shutdown, step-down and network codes.
 */
const UNAVAILABLE_CODES = new Set([1, 6, 7, 89, 91, 189, 9001, 10107, 11600, 11602, 13435, 13436]);

/** Driver errors raised when no server answers (by class name: some are not exported by every driver version). */
const UNAVAILABLE_CLASSES = new Set([
  'MongoServerSelectionError',
  'MongooseServerSelectionError',
  'MongoNotConnectedError',
  'MongoOperationTimeoutError',
  'MongoPoolClearedError',
  'MongoTopologyClosedError',
]);

/**
 * Whether an error says the database is unreachable or restarting for now (a write may succeed
 * shortly): by class and code, never by message text, except mongoose's "initial connection" one.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  // Not `instanceof Error`: Node's own socket errors may come from another realm (a VM context).
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  if (!(error instanceof Error)) return (error as NodeJS.ErrnoException).code === 'EPIPE';
  if (error instanceof mongo.MongoNetworkError || UNAVAILABLE_CLASSES.has(error.name)) return true;
  if (error.name === 'MongooseError' && /initial connection/.test(error.message)) return true;
  // The driver (6.x) lets Node's own error through when it writes a command to a socket the
  // server has just closed (kill -9): "This socket has been ended by the other party".
  if ((error as NodeJS.ErrnoException).code === 'EPIPE') return true;
  // A bulk write's error carries the command's own failure (e.g. the connection closed) beside it.
  const inner = (error as { errorResponse?: unknown }).errorResponse ?? error.cause;
  if (isDatabaseUnavailable(inner, depth + 1)) return true;
  return (
    error instanceof mongo.MongoServerError &&
    typeof error.code === 'number' &&
    UNAVAILABLE_CODES.has(error.code)
  );
}

/** Maps driver errors to the platform's error taxonomy by code and class, never by message text. */
export function mapDatabaseError(error: unknown): AppError | undefined {
  if (error instanceof mongo.MongoServerError && error.code === 11000) {
    const fields = Object.keys((error as { keyValue?: Record<string, unknown> }).keyValue ?? {});
    return new ConflictError(
      fields.length > 0
        ? `a resource with this ${fields.join(', ')} already exists`
        : 'the resource already exists',
      { cause: error },
    );
  }
  if (isDatabaseUnavailable(error)) {
    return new ServiceUnavailableError('the database is unavailable; try again shortly', {
      cause: error,
      headers: { 'retry-after': String(DATABASE_RETRY_AFTER_S) },
    });
  }
  return undefined;
}
