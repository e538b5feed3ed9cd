import pino, { type DestinationStream, type Logger } from 'pino';
import { currentContext } from './context';
import { redact, redactText } from './redact';

export type { DestinationStream, Logger } from 'pino';

export interface LoggerOptions {
  service: string;
  version: string;
  level?: string;
  /** Where lines go; stdout by default. Tests pass a stream to read what was logged. */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: options.service, version: options.version },
      timestamp: pino.stdTimeFunctions.isoTime,
      messageKey: 'msg',
      formatters: {
        level: (label) => ({ level: label }),
        // Every line passes through here (before any serializer), so no secret field reaches a log
        // at any depth; errors become plain objects here too.
        log: (object) => redact(object) as Record<string, unknown>,
      },
      // Errors are already plain objects (see formatters.log); pino's own err serializer would
      // re-read them as errors and call them "Object".
      serializers: { err: (value: unknown) => value },
      mixin() {
        const context = currentContext();
        return context ? { correlation_id: context.correlationId, request_id: context.requestId } : {};
      },
      hooks: {
        logMethod(args, method) {
          method.apply(
            this,
            args.map((arg) => (typeof arg === 'string' ? redactText(arg) : arg)) as typeof args,
          );
        },
      },
    },
    options.destination ?? pino.destination({ sync: false }),
  );
}
