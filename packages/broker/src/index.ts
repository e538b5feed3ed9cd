export * from './broker';
export type { BrokerOptions } from './options';
export { correlationId } from './correlation';
export { BrokerUnavailableError, PublishNackedError } from './confirm';
export * from './consumer';
export * from './topology';
export { brokerUrls, connectAny } from './failover';
