export * from './errors';
export * from './problem';
export * from './internal-auth';
export * from './route';
export * from './app';
export * from './pagination';
export * from './openapi';
