export * from './mask';
export * from './key-ring';
export * from './secret-box';
