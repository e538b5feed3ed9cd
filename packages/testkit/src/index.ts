export * from './infra';
export * from './helpers';
