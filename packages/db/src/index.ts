export * from './connection';
export * from './errors';
export * from './claims';
export * from './sequence';
export * from './outbox';
export * from './idempotency';
export * from './processed-events';
export * from './paging';
