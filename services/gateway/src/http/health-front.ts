import type { IncomingMessage, ServerResponse } from 'node:http';
import { respondWithError, type AppError } from '@pack/http-kit';
import type { Logger } from '@pack/logging';
import { HEALTH_PATHS, type HealthLimits } from '../domain/health-limits';
import { clientAddress } from './auth-routes';

type Front = (req: IncomingMessage, res: ServerResponse, next: () => void) => boolean;

/**
 * Puts the healthcheck limits in front of the public port's /healthz and /readyz; an admitted
 * request goes on to the runtime's own answer. The metrics listener's probes are not limited.
 */
export function limitHealth(
  limits: HealthLimits,
  options: { trustedProxyHops: number; logger: Logger; mapError?: (error: unknown) => AppError | undefined },
  front: Front,
): Front {
  return (req, res, next) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !HEALTH_PATHS.has(path))
      return front(req, res, next);
    const forwarded = req.headers['x-forwarded-for'];
    const client = clientAddress(
      req.socket.remoteAddress,
      Array.isArray(forwarded) ? forwarded.join(',') : forwarded,
      options.trustedProxyHops,
    );
    limits
      .admit(client, path)
      .then(next, (error: unknown) => respondWithError(error, res, path, options.logger, options.mapError));
    return true;
  };
}
