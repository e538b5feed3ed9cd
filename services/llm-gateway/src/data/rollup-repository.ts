import { mongo, type Connection } from 'mongoose';
import type { Rollup, RollupDelta, RollupStore } from '../domain/calls';

export const LLM_ROLLUPS_COLLECTION = 'llm_call_rollups';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Sums of one hour. Keys are field names (`h07`, `b40`), never array indexes or numbers. */
interface HourSums {
  calls: mongo.Long;
  errors: mongo.Long;
  input_tokens: mongo.Long;
  output_tokens: mongo.Long;
  unpriced_calls: mongo.Long;
  cost_units: mongo.Long;
  latency: Record<string, mongo.Long | number>;
}

interface RollupDocument {
  _id: string;
  model_id: number;
  processor_id: number | null;
  /** Start of the UTC day. */
  day: Date;
  hours: Record<string, HourSums>;
}

const long = (value: number | bigint) => mongo.Long.fromBigInt(BigInt(value));
const num = (value: number | mongo.Long | undefined) =>
  value === undefined ? 0 : typeof value === 'number' ? value : value.toNumber();
const hourKey = (hour: number) => `h${String(hour).padStart(2, '0')}`;
const dayOf = (date: Date) => new Date(Math.floor(date.getTime() / DAY_MS) * DAY_MS);

/**
 * Per model, processor and UTC day, one document holding the sums of each hour, every counter a
 * 64-bit integer (`Long`) that `$inc` adds exactly on MongoDB and on FerretDB. A day per document
 * keeps the dashboard's reads 24 times smaller than a document per hour, at the same hourly
 * resolution (docs/decisions/0018).
 */
export class RollupRepository implements RollupStore {
  private readonly rollups;

  constructor(connection: Connection) {
    this.rollups = connection.collection<RollupDocument>(LLM_ROLLUPS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.rollups.createIndex({ day: 1 }, { name: 'day' });
  }

  async add(delta: RollupDelta): Promise<void> {
    const day = dayOf(delta.hour);
    const at = `hours.${hourKey(delta.hour.getUTCHours())}`;
    await this.rollups.updateOne(
      { _id: `${delta.model_id}:${delta.processor_id ?? '-'}:${day.toISOString().slice(0, 10)}` },
      {
        $inc: {
          [`${at}.calls`]: long(1),
          [`${at}.errors`]: long(delta.error ? 1 : 0),
          [`${at}.input_tokens`]: long(delta.input_tokens),
          [`${at}.output_tokens`]: long(delta.output_tokens),
          [`${at}.unpriced_calls`]: long(delta.unpriced ? 1 : 0),
          [`${at}.cost_units`]: long(delta.cost_units),
          [`${at}.latency.b${delta.latency_bucket}`]: long(1),
        },
        $setOnInsert: { model_id: delta.model_id, processor_id: delta.processor_id, day },
      },
      { upsert: true },
    );
  }

  async between(from: Date, to: Date): Promise<Rollup[]> {
    const documents = await this.rollups
      .find({ day: { $gte: dayOf(from), $lt: to } }, { promoteLongs: false })
      .toArray();
    const rollups: Rollup[] = [];
    for (const doc of documents)
      for (const [key, sums] of Object.entries(doc.hours ?? {})) {
        const hour = new Date(doc.day.getTime() + Number(key.slice(1)) * HOUR_MS);
        if (hour < from || hour >= to) continue;
        rollups.push({
          model_id: doc.model_id,
          // FerretDB leaves out a null set on insert.
          processor_id: doc.processor_id ?? null,
          hour,
          calls: num(sums.calls),
          errors: num(sums.errors),
          input_tokens: num(sums.input_tokens),
          output_tokens: num(sums.output_tokens),
          unpriced_calls: num(sums.unpriced_calls),
          cost_units: BigInt(sums.cost_units.toString()),
          latency: new Map(
            Object.entries(sums.latency ?? {}).map(([bucket, count]) => [
              Number(bucket.slice(1)),
              num(count),
            ]),
          ),
        });
      }
    return rollups;
  }
}
