import type { Connection } from 'mongoose';
import type { Logger } from '@pack/logging';
import type { Metrics } from '@pack/metrics';
import { PROCESSED_EVENTS, type ProcessedEvent } from './idempotency';
import { deleteInSlices } from './slices';

export const DAY_MS = 86_400_000;
/** FerretDB v1 answers a TTL index, and collMod, with NotImplemented. */
const NOT_IMPLEMENTED = 238;
/** MongoDB: an index on `at` exists already, with another (or no) expiry. */
const INDEX_OPTIONS_CONFLICT = 85;
/** A server without the command at all (mongo-java-server: collMod). */
const COMMAND_NOT_FOUND = 59;
/** listIndexes on a collection that does not exist yet. */
const NAMESPACE_NOT_FOUND = 26;

function errorCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
}

interface IndexInfo {
  key: Record<string, unknown>;
  expireAfterSeconds?: number;
}

/** The index on `{at: 1}`, or undefined (none yet, or no collection yet). */
async function atIndex(connection: Connection): Promise<IndexInfo | undefined> {
  try {
    const indexes = (await connection.collection(PROCESSED_EVENTS).indexes()) as IndexInfo[];
    return indexes.find((index) => Object.keys(index.key).join() === 'at' && index.key.at === 1);
  } catch (error) {
    if (errorCode(error) === NAMESPACE_NOT_FOUND) return undefined;
    throw error;
  }
}

/**
 * Sets the expiry of the existing index on `at` with collMod: MongoDB refuses a createIndex with
 * other options (IndexOptionsConflict), so collMod is the way. A server with TTL indexes but
 * without collMod (mongo-java-server answers CommandNotFound) gets the index dropped and made
 * again, the sweep covering the moment between. A server without TTL (FerretDB v1 answers
 * NotImplemented) keeps its plain index: false.
 */
async function changeExpiry(connection: Connection, expireAfterSeconds: number): Promise<boolean> {
  try {
    await connection.db!.command({
      collMod: PROCESSED_EVENTS,
      index: { keyPattern: { at: 1 }, expireAfterSeconds },
    });
  } catch (error) {
    if (errorCode(error) === NOT_IMPLEMENTED) return false;
    if (errorCode(error) !== COMMAND_NOT_FOUND) throw error;
    const collection = connection.collection(PROCESSED_EVENTS);
    await collection.dropIndex('at_1');
    await collection.createIndex({ at: 1 }, { expireAfterSeconds });
  }
  const index = await atIndex(connection);
  if (index?.expireAfterSeconds !== expireAfterSeconds)
    throw new Error(
      `processed_events: collMod answered ok but the index on at expires after ${index?.expireAfterSeconds} s, not ${expireAfterSeconds} s`,
    );
  return true;
}

/**
 * Indexes `at`, so the sweep is a range delete. Where the server supports it (MongoDB) the index
 * is a TTL index and the server expires markers by itself as well; FerretDB v1 has no TTL and
 * gets a plain index. Safe to run from several replicas at once, and again after a change of
 * retention (the TTL index's expiry then changes with collMod). Answers whether the server
 * expires markers itself.
 */
export async function ensureProcessedEventsIndex(
  connection: Connection,
  retentionMs: number,
): Promise<boolean> {
  const collection = connection.collection<ProcessedEvent>(PROCESSED_EVENTS);
  const expireAfterSeconds = Math.ceil(retentionMs / 1000);
  const existing = await atIndex(connection);
  if (existing?.expireAfterSeconds === expireAfterSeconds) return true;
  if (existing?.expireAfterSeconds !== undefined) return changeExpiry(connection, expireAfterSeconds);
  try {
    await collection.createIndex({ at: 1 }, { expireAfterSeconds });
    // A server may answer ok and keep an index it had with another expiry: look.
    const made = await atIndex(connection);
    return made?.expireAfterSeconds === expireAfterSeconds || changeExpiry(connection, expireAfterSeconds);
  } catch (error) {
    // Another replica made it first with another expiry, or a plain index is there (MongoDB).
    if (errorCode(error) === INDEX_OPTIONS_CONFLICT) return changeExpiry(connection, expireAfterSeconds);
    if (errorCode(error) !== NOT_IMPLEMENTED) throw error;
  }
  await collection.createIndex({ at: 1 });
  return false;
}

/**
 * Removes markers written before `cutoff`, in slices by `at` (deleteInSlices: two commands per
 * DELETE_SLICE, 50,000, markers); idempotent, so every replica may run it.
 */
export function sweepProcessedEvents(connection: Connection, cutoff: Date): Promise<number> {
  return deleteInSlices(connection.collection<ProcessedEvent>(PROCESSED_EVENTS), {
    match: {},
    key: 'at',
    upTo: { $lt: cutoff },
  });
}

export interface ProcessedEventsSweeperOptions {
  connection: Connection;
  logger: Logger;
  metrics: Metrics;
  /** Markers older than this are removed: a copy of an event redelivered later is handled again. */
  retentionMs: number;
  /** Default one hour. */
  intervalMs?: number;
  /**
   * Other records that only matter while a copy of their event may come, swept with the markers
   * by their own indexed time field (the id claims, the llm-gateway's call claims, the budget
   * ledger): kept the same retention, then gone in slices (any number, on FerretDB too).
   */
  retained?: readonly RetainedRecords[];
}

/** A collection whose documents go after the retention, by an indexed date field. */
export interface RetainedRecords {
  collection: string;
  /** A top-level date field, indexed by the sweeper at start. */
  key: string;
}

/**
 * Keeps `processed_events` (the idempotency markers) bounded: indexes it at start, then sweeps
 * at start and on an interval. It runs even where a TTL index exists, since it is a few indexed
 * deletes and the TTL monitor runs only once a minute, at the server's pace.
 */
export class ProcessedEventsSweeper {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private readonly swept;

  private readonly sweptRecords;

  constructor(private readonly options: ProcessedEventsSweeperOptions) {
    this.swept = options.metrics.counter(
      'processed_events_swept_total',
      'Idempotency markers removed after their retention',
    );
    this.sweptRecords = options.metrics.counter(
      'retained_records_swept_total',
      'Records kept only as long as a copy of their event may come (claims, ledgers), removed after the retention',
      ['collection'],
    );
  }

  start(): void {
    this.running = this.prepare().then(() => this.sweepSafely());
    this.timer = setInterval(() => {
      this.running = this.sweepSafely();
    }, this.options.intervalMs ?? 3_600_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One sweep now; answers how many markers went. */
  async sweep(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - this.options.retentionMs);
    const removed = await sweepProcessedEvents(this.options.connection, cutoff);
    this.swept.inc(removed);
    for (const { collection, key } of this.options.retained ?? []) {
      const gone = await deleteInSlices(this.options.connection.collection(collection), {
        match: {},
        key,
        upTo: { $lt: cutoff },
      });
      this.sweptRecords.inc({ collection }, gone);
    }
    return removed;
  }

  private async prepare(): Promise<void> {
    for (const { collection, key } of this.options.retained ?? [])
      await this.options.connection
        .collection(collection)
        .createIndex({ [key]: 1 }, { name: key })
        .catch((error: unknown) =>
          this.options.logger.warn({ err: error, collection }, `could not index ${key}; sweeping anyway`),
        );
    try {
      const ttl = await ensureProcessedEventsIndex(this.options.connection, this.options.retentionMs);
      this.options.logger.info(
        { retention_ms: this.options.retentionMs, server_ttl: ttl },
        'processed-events retention in force',
      );
    } catch (error) {
      this.options.logger.warn({ err: error }, 'could not index processed_events; sweeping anyway');
    }
  }

  private async sweepSafely(): Promise<void> {
    try {
      const removed = await this.sweep();
      if (removed > 0) this.options.logger.info({ removed }, 'old processed-event markers removed');
    } catch (error) {
      this.options.logger.warn({ err: error }, 'processed-events sweep failed; next one retries');
    }
  }
}
