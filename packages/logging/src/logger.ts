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
        // Every line passes through here, so no secret field reaches a log at any depth.
        log: (object) => redact(object) as Record<string, unknown>,
      },
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
      serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
    },
    options.destination ?? pino.destination({ sync: false }),
  );
}
