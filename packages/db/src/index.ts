export * from './connection';
export * from './errors';
export * from './sequence';
export * from './outbox';
export * from './idempotency';
