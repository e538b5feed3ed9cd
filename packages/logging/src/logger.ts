import path from 'node:path';
import { context, trace } from '@opentelemetry/api';
import pino, { type DestinationStream, type Logger, type StreamEntry } from 'pino';
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

/**
 * When set (the test suite's global set-up sets it), every logger of the process also appends
 * each line at debug level, whatever LOG_LEVEL says, to `<dir>/log-<pid>.jsonl`: the suite's leak
 * scan reads every line any service wrote, in-process or in a child process.
 */
export const LOG_COPY_DIR_ENV = 'PACK_LOG_COPY_DIR';

/** One synchronous append-only file per module instance (O_APPEND keeps lines whole). */
let copy: { dir: string; stream: DestinationStream } | undefined;
function logCopy(dir: string): DestinationStream {
  if (copy?.dir !== dir)
    copy = {
      dir,
      stream: pino.destination({
        dest: path.join(dir, `log-${process.pid}.jsonl`),
        sync: true,
        append: true,
      }),
    };
  return copy.stream;
}

export function createLogger(options: LoggerOptions): Logger {
  const level = options.level ?? 'info';
  const destination = options.destination ?? pino.destination({ sync: false });
  const copyDir = process.env[LOG_COPY_DIR_ENV];
  const streams: StreamEntry[] = copyDir ? [{ level: 'debug', stream: logCopy(copyDir) }] : [];
  if (copyDir && level !== 'silent') streams.push({ level: level as pino.Level, stream: destination });
  return pino(
    {
      level:
        copyDir && (level === 'silent' || pino.levels.values[level]! > pino.levels.values.debug!)
          ? 'debug'
          : level,
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
        const request = currentContext();
        const fields: Record<string, string | undefined> = request
          ? { correlation_id: request.correlationId, request_id: request.requestId }
          : {};
        // A line written inside a recorded span joins its trace (nothing when tracing is off).
        const span = trace.getSpanContext(context.active());
        if (span && trace.isSpanContextValid(span)) {
          fields.trace_id = span.traceId;
          fields.span_id = span.spanId;
        }
        return fields;
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
    copyDir ? pino.multistream(streams) : destination,
  );
}
