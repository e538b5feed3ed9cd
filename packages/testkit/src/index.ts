export * from './infra';
export * from './helpers';
export * from './call';
export * from './events';
export * from './outbox';
