export { BoundedCache, type CacheBound } from './bounded-cache';
export { DEFAULT_MAX_ENTRIES, TimedCache } from './timed-cache';
