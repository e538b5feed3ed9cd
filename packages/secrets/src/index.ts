export * from './mask';
export * from './key-ring';
export * from './secret-box';
export * from './field-codec';
