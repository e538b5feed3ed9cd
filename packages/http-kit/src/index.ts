export * from './errors';
export * from './problem';
// The principal headers and owner reads live in @pack/internal-auth (no express there).
export * from '@pack/internal-auth';
export * from './route';
export * from './app';
export * from './ops';
export * from './error-response';
export * from './pagination';
export * from './page-key';
export * from './openapi';
export * from './params';
export * from './json-body';
export * from './client-error';
