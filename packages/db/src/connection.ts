import mongoose, { type Connection } from 'mongoose';
import type { Logger } from '@pack/logging';
import type { Metrics } from '@pack/metrics';
import { waitFor } from '@pack/reliability';

export interface MongoOptions {
  url: string;
  dbName: string;
  logger: Logger;
  metrics: Metrics;
}

export interface Mongo {
  connection: Connection;
  /** Resolves once connected; retries with backoff until then (the service reports not-ready). */
  connected: Promise<void>;
  isReady(): Promise<boolean>;
  /** Database commands sent so far, by command name (benchmarks read this). */
  commandCounts(): Record<string, number>;
  close(): Promise<void>;
}

/**
 * One connection per service database. Commands are counted through the driver's command
 * monitoring, so the number of round trips per operation is visible in /metrics.
 */
export function connectMongo(options: MongoOptions): Mongo {
  const connection = mongoose.createConnection();
  connection.set('bufferCommands', false);
  const counts: Record<string, number> = {};
  const commands = options.metrics.counter('db_commands_total', 'Database commands sent, by command name', [
    'command',
  ]);
  let closing = false;

  const open = async () => {
    await waitFor(
      async () => {
        await connection.openUri(options.url, {
          dbName: options.dbName,
          monitorCommands: true,
          serverSelectionTimeoutMS: 5000,
          maxPoolSize: 20,
        });
        connection.getClient().on('commandStarted', (event) => {
          counts[event.commandName] = (counts[event.commandName] ?? 0) + 1;
          commands.inc({ command: event.commandName });
        });
        options.logger.info({ db: options.dbName }, 'database connected');
      },
      {
        baseDelayMs: 200,
        maxDelayMs: 5000,
        stopped: () => closing,
        holdProcess: true,
        onWait: (error, attempt, delay) =>
          options.logger.warn(
            { err: error, attempt: attempt - 1, retry_in_ms: delay },
            'database connect failed; retrying',
          ),
      },
    );
  };
  const connected = open();

  return {
    connection,
    connected,
    async isReady() {
      if (connection.readyState !== mongoose.ConnectionStates.connected || !connection.db) return false;
      try {
        await connection.db.command({ ping: 1 }, { timeoutMS: 2000 });
        return true;
      } catch {
        return false;
      }
    },
    commandCounts: () => ({ ...counts }),
    async close() {
      closing = true;
      await connected.catch(() => undefined);
      await connection.close();
    },
  };
}
