export * from './broker';
export { BrokerUnavailableError } from './confirm';
export * from './consumer';
export * from './topology';
