export * from './identity';
export * from './secrets';
export * from './envelope';
export * from './events';
export * from './gen-ui';
export * from './settings';
export * from './llm';
export * from './webhooks';
