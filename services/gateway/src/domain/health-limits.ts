import type { GeneralSettings } from '@pack/contracts';
import { TooManyRequestsError } from '@pack/errors';
import type { MinuteCounter } from './store';

/** The health endpoints the gateway answers on its public port. */
export const HEALTH_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);
/** The one whose answer reports the dependencies (and reads them): healthcheck_response_rate_limit. */
export const REPORT_PATH = '/readyz';

/**
 * External API Settings' healthcheck limits on the public health endpoints, per client address
 * and per minute (docs/decisions/0029): healthcheck_rate_limit_per_minute counts every health
 * request, healthcheck_response_rate_limit the readiness reports among them.
 */
export class HealthLimits {
  constructor(
    private readonly counter: MinuteCounter,
    private readonly settings: () => GeneralSettings,
  ) {}

  /** Throws 429 with Retry-After when a limit is reached. */
  async admit(client: string, path: string): Promise<void> {
    const limits = this.settings().external_api;
    const wait = await this.counter.consume(`requests:${client}`, limits.healthcheck_rate_limit_per_minute);
    if (wait > 0)
      throw tooMany(
        wait,
        `${limits.healthcheck_rate_limit_per_minute} health requests`,
        'healthcheck_rate_limit_per_minute',
      );
    if (path !== REPORT_PATH) return;
    const reportWait = await this.counter.consume(
      `reports:${client}`,
      limits.healthcheck_response_rate_limit,
    );
    if (reportWait > 0)
      throw tooMany(
        reportWait,
        `${limits.healthcheck_response_rate_limit} readiness reports`,
        'healthcheck_response_rate_limit',
      );
  }
}

function tooMany(wait: number, what: string, setting: string): TooManyRequestsError {
  return new TooManyRequestsError(
    `at most ${what} per minute per client (${setting}); try again in ${wait} s`,
    {
      headers: { 'retry-after': String(wait) },
    },
  );
}
