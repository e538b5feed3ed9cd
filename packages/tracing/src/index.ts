export * from './scope';
export * from './setup';
export * from './spans';
export { redactAttributes } from './processor';
export type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
