export * from './infra';
export * from './helpers';
export * from './call';
export * from './openapi';
export * from './events';
export * from './outbox';
export * from './fake-providers';
export * from './fake-settings';
