import express, { type Request, type RequestHandler } from 'express';
import { isBareBadRequest, UnsupportedMediaTypeError, ValidationError } from './errors';
import { parseJsonBody, type JsonBodyOptions } from './json-body';
import type { AnyRoute } from './route';

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i;
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)/i;

/**
 * A body must be JSON in UTF-8 (415 otherwise); it is read as bytes and parsed by
 * parseJsonBody, which refuses invalid UTF-8, prototype keys and excessive nesting. A route
 * without a body schema ignores any body.
 */
export function jsonBody(limit: number, options: JsonBodyOptions = {}): RequestHandler[] {
  const read = express.raw({ limit, type: () => true });
  return [
    (req, _res, next) => {
      if (!hasBody(req)) return next();
      const type = req.headers['content-type'] ?? '';
      if (!JSON_TYPE.test(type)) {
        return next(
          new UnsupportedMediaTypeError(`Content-Type must be application/json, got "${type || 'none'}"`),
        );
      }
      const charset = CHARSET.exec(type)?.[1]?.toLowerCase();
      if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
        return next(new UnsupportedMediaTypeError(`JSON bodies must be UTF-8, got charset "${charset}"`));
      next();
    },
    (req, res, next) => read(req, res, (error?: unknown) => next(undecodable(req, error))),
    (req, _res, next) => {
      const raw: unknown = req.body;
      try {
        req.body = raw instanceof Buffer ? parseJsonBody(raw, options) : undefined;
      } catch (error) {
        return next(error);
      }
      next();
    },
  ];
}

/**
 * A body its Content-Encoding does not decode (gzip, deflate or br data that is not) comes from
 * the reader as a bare 400 error, which would answer 500: a 400 naming the body instead.
 */
function undecodable(req: Request, error: unknown): unknown {
  if (!isBareBadRequest(error)) return error;
  const encoding = req.headers['content-encoding'] ?? 'identity';
  const reason = error instanceof Error ? `: ${error.message}` : '';
  return new ValidationError('the request body could not be read', {
    errors: { '(body)': [`could not be decoded as Content-Encoding ${encoding}${reason}`] },
  });
}

/** A PATCH changes at least one field: an empty object is a mistake, not a request to touch updated_at. */
export function refuseEmptyPatch(route: AnyRoute, body: unknown): void {
  if (route.method !== 'patch' || typeof body !== 'object' || body === null || Array.isArray(body)) return;
  if (Object.keys(body).length === 0)
    throw new ValidationError('a PATCH needs at least one field to change', {
      errors: { '(body)': ['send at least one field to change'] },
    });
}
