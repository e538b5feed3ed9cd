import { mongo } from 'mongoose';
import { ConflictError, ServiceUnavailableError, type AppError } from '@pack/errors';

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
  if (
    error instanceof mongo.MongoNetworkError ||
    error instanceof mongo.MongoServerSelectionError ||
    error instanceof mongo.MongoNotConnectedError ||
    (error instanceof Error && error.name === 'MongooseServerSelectionError') ||
    (error instanceof Error && error.name === 'MongooseError' && /initial connection/.test(error.message))
  ) {
    return new ServiceUnavailableError('the database is unavailable; try again shortly', { cause: error });
  }
  return undefined;
}
