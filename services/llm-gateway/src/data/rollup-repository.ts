import { mongo, type Connection } from 'mongoose';
import { LARGE_BATCH } from '@pack/db';
import type { CallKind, Rollup } from '../domain/calls/calls';
import { rollupKey } from '../domain/calls/rollup-batch';
import type { RollupStore } from '../domain/calls/store';

export const LLM_ROLLUPS_COLLECTION = 'llm_call_rollups';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

type Period = 'hour' | 'day';

/**
 * The sums of one kind, model, processor and currency per hour or UTC day; every counter a 64-bit
 * integer.
 */
interface RollupDocument {
  _id: string;
  period: Period;
  /** Absent: generations (rollups written before kinds were kept). */
  kind?: CallKind;
  model_id: number;
  processor_id: number | null;
  /** Start of the hour or day. */
  start: Date;
  /**
   * The UTC day (hours) or month (days) it falls in, as text: FerretDB filters equality on a
   * scalar in the database, ranges only after reading every document, so reads name these.
   */
  within: string;
  calls: mongo.Long;
  errors: mongo.Long;
  input_tokens: mongo.Long;
  output_tokens: mongo.Long;
  unpriced_calls: mongo.Long;
  cost_units: mongo.Long;
  /** The cost's units above the low 32 bits (costParts); absent while they are none. */
  cost_units_high?: mongo.Long;
  /** The currency of `cost_units`; absent in rollups written before currencies were kept. */
  currency?: string;
  /** Calls made as a fallback of another model; absent in rollups written before. */
  fallbacks?: mongo.Long;
  /** Calls per latency bucket, under `b<k>` (field names, never numeric keys). */
  latency: Record<string, mongo.Long | number>;
}

const long = (value: number | bigint) => mongo.Long.fromBigInt(BigInt(value));

/**
 * A cost sum kept in two 64-bit counters, `cost_units` the low 32 bits of each call's units and
 * `cost_units_high` the rest, so that no sum of realistic calls can wrap around: `$inc` carries
 * nothing between fields, and the sum of the parts is the same whichever way they were added.
 * Rollups written with `cost_units` alone read the same.
 */
const COST_LOW_BITS = 32n;
const COST_LOW_MASK = (1n << COST_LOW_BITS) - 1n;

function costParts(units: bigint): { cost_units: mongo.Long; cost_units_high?: mongo.Long } {
  const high = units >> COST_LOW_BITS;
  return { cost_units: long(units & COST_LOW_MASK), ...(high > 0n && { cost_units_high: long(high) }) };
}

const costOf = (doc: Pick<RollupDocument, 'cost_units' | 'cost_units_high'>) =>
  BigInt(doc.cost_units.toString()) + (BigInt(doc.cost_units_high?.toString() ?? '0') << COST_LOW_BITS);
const num = (value: number | mongo.Long | undefined) =>
  value === undefined ? 0 : typeof value === 'number' ? value : value.toNumber();
const dayOf = (time: number) => Math.floor(time / DAY_MS) * DAY_MS;
/** The day of an hour, the month of a day. */
const withinOf = (period: Period, time: number) =>
  new Date(time).toISOString().slice(0, period === 'hour' ? 10 : 7);

/** Every UTC month from the one holding `start` to the one holding `end - 1`. */
function monthsOf(start: number, end: number): string[] {
  const months: string[] = [];
  const at = new Date(start);
  at.setUTCDate(1);
  while (at.getTime() < end) {
    months.push(at.toISOString().slice(0, 7));
    at.setUTCMonth(at.getUTCMonth() + 1);
  }
  return months;
}

/**
 * Rollups at two resolutions in one collection: per kind, model, processor, currency and hour,
 * and the same per UTC day. Sums add to both with one `update` command (two upserts with `$inc` per
 * sum, sent together; the generation sums the calls that finish while a write is under way); the
 * dashboard reads whole days from the day documents and only the hours at the edges of its range
 * from the hour documents (docs/decisions/0018). `$inc` on Int64 is exact
 * on MongoDB and on FerretDB.
 */
export class RollupRepository implements RollupStore {
  private readonly rollups;

  constructor(connection: Connection) {
    this.rollups = connection.collection<RollupDocument>(LLM_ROLLUPS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.rollups.createIndex({ period: 1, within: 1, start: 1 }, { name: 'period_within_start' });
  }

  async addAll(sums: readonly Rollup[]): Promise<void> {
    if (sums.length === 0) return;
    const upsert = (sum: Rollup, period: Period, start: Date) => ({
      updateOne: {
        filter: { _id: `${period}:${rollupKey({ ...sum, hour: start })}` },
        update: {
          $inc: {
            calls: long(sum.calls),
            errors: long(sum.errors),
            input_tokens: long(sum.input_tokens),
            output_tokens: long(sum.output_tokens),
            unpriced_calls: long(sum.unpriced_calls),
            ...costParts(sum.cost_units),
            ...(sum.fallbacks > 0 && { fallbacks: long(sum.fallbacks) }),
            ...Object.fromEntries(
              [...sum.latency].map(([bucket, count]) => [`latency.b${bucket}`, long(count)]),
            ),
          },
          $setOnInsert: {
            period,
            kind: sum.kind,
            ...(sum.currency !== null && { currency: sum.currency }),
            model_id: sum.model_id,
            processor_id: sum.processor_id,
            start,
            within: withinOf(period, start.getTime()),
          },
        },
        upsert: true,
      },
    });
    // One command: the driver sends consecutive updates of a bulk write as one `update`.
    await this.rollups.bulkWrite(
      sums.flatMap((sum) => [
        upsert(sum, 'hour', sum.hour),
        upsert(sum, 'day', new Date(dayOf(sum.hour.getTime()))),
      ]),
      { ordered: false },
    );
  }

  async between(from: Date, to: Date): Promise<Rollup[]> {
    // Whole days inside [from, to) come from day documents, the hours around them from hour ones.
    const firstDay = dayOf(from.getTime() + DAY_MS - 1);
    const endDay = Math.max(firstDay, dayOf(to.getTime()));
    const find = (period: Period, within: string, start: number, end: number) =>
      this.rollups
        .find(
          { period, within, start: { $gte: new Date(start), $lt: new Date(end) } },
          { promoteLongs: false, batchSize: LARGE_BATCH },
        )
        .toArray();
    const edge = (start: number, end: number) =>
      start >= end ? [] : [find('hour', withinOf('hour', start), start, end)];
    // Each edge lies within one day; whole days are read month by month.
    const parts = await Promise.all([
      ...(firstDay < endDay
        ? monthsOf(firstDay, endDay).map((month) => find('day', month, firstDay, endDay))
        : []),
      ...edge(from.getTime(), Math.min(firstDay, to.getTime())),
      ...edge(Math.max(endDay, from.getTime()), to.getTime()),
    ]);
    return parts.flat().map((doc) => ({
      kind: doc.kind ?? 'generation',
      model_id: doc.model_id,
      // FerretDB leaves out a null set on insert.
      processor_id: doc.processor_id ?? null,
      hour: doc.start,
      calls: num(doc.calls),
      errors: num(doc.errors),
      input_tokens: num(doc.input_tokens),
      output_tokens: num(doc.output_tokens),
      unpriced_calls: num(doc.unpriced_calls),
      cost_units: costOf(doc),
      currency: doc.currency ?? null,
      fallbacks: num(doc.fallbacks),
      latency: new Map(
        Object.entries(doc.latency ?? {}).map(([bucket, count]) => [Number(bucket.slice(1)), num(count)]),
      ),
    }));
  }
}
