export * from './broker';
export * from './topology';
