export * from './internal-auth';
export * from './owner-read';
