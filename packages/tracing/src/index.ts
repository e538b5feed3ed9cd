export * from './scope';
export * from './setup';
export * from './spans';
export { redactAttributes } from './processor';
