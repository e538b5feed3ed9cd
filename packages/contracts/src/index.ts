export * from './identity';
export * from './secrets';
export * from './envelope';
export * from './events';
export * from './settings';
