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
export {
  DEFAULT_MAX_BREAKER_KEYS,
  KeyedBreakers,
  type BreakerOptions,
  type BreakerState,
  type KeyedBreakerOptions,
} from './breakers';
export { LOST_RACE, retryOnConflict, type ConflictOptions } from './conflict';
export { waitFor, type WaitOptions } from './wait';
export { GroupCommit, type GroupCommitOptions } from './group-commit';
