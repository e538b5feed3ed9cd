export * from './context';
export * from './redact';
export * from './logger';
