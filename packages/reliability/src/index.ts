export {
  backoffMs,
  exponentialMs,
  jittered,
  type BackoffOptions,
  type Jitter,
  type RetryPolicy,
} from './backoff';
export { parseRetryAfter } from './retry-after';
export { retry, type RetryOptions } from './retry';
export { KeyedBreakers, type BreakerOptions, type BreakerState, type KeyedBreakerOptions } from './breakers';
