import { mongo, type Connection } from 'mongoose';
import type { Rollup, RollupDelta, RollupStore } from '../domain/calls';

export const LLM_ROLLUPS_COLLECTION = 'llm_call_rollups';

/** Bucket counts live under `latency.b<k>`: field names, never array indexes or numeric keys. */
const BUCKET = 'b';

interface RollupDocument {
  _id: string;
  model_id: number;
  processor_id: number | null;
  hour: Date;
  calls: mongo.Long;
  errors: mongo.Long;
  input_tokens: mongo.Long;
  output_tokens: mongo.Long;
  unpriced_calls: mongo.Long;
  cost_units: mongo.Long;
  latency: Record<string, number | mongo.Long>;
}

const long = (value: number | bigint) => mongo.Long.fromBigInt(BigInt(value));
const num = (value: number | mongo.Long | undefined) =>
  value === undefined ? 0 : typeof value === 'number' ? value : value.toNumber();

/**
 * Per model, processor and UTC hour, one document of sums. Every counter is a 64-bit integer
 * (`Long`), which `$inc` adds exactly on MongoDB and on FerretDB (docs/decisions/0018).
 */
export class RollupRepository implements RollupStore {
  private readonly rollups;

  constructor(connection: Connection) {
    this.rollups = connection.collection<RollupDocument>(LLM_ROLLUPS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.rollups.createIndex({ hour: 1 }, { name: 'hour' });
  }

  async add(delta: RollupDelta): Promise<void> {
    const hour = delta.hour.toISOString();
    await this.rollups.updateOne(
      { _id: `${delta.model_id}:${delta.processor_id ?? '-'}:${hour}` },
      {
        $inc: {
          calls: long(1),
          errors: long(delta.error ? 1 : 0),
          input_tokens: long(delta.input_tokens),
          output_tokens: long(delta.output_tokens),
          unpriced_calls: long(delta.unpriced ? 1 : 0),
          cost_units: long(delta.cost_units),
          [`latency.${BUCKET}${delta.latency_bucket}`]: long(1),
        },
        $setOnInsert: { model_id: delta.model_id, processor_id: delta.processor_id, hour: delta.hour },
      },
      { upsert: true },
    );
  }

  async between(from: Date, to: Date): Promise<Rollup[]> {
    const documents = await this.rollups
      .find({ hour: { $gte: from, $lt: to } }, { promoteLongs: false })
      .toArray();
    return documents.map((doc) => ({
      model_id: doc.model_id,
      // FerretDB leaves out a null set on insert.
      processor_id: doc.processor_id ?? null,
      hour: doc.hour,
      calls: num(doc.calls),
      errors: num(doc.errors),
      input_tokens: num(doc.input_tokens),
      output_tokens: num(doc.output_tokens),
      unpriced_calls: num(doc.unpriced_calls),
      cost_units: BigInt(doc.cost_units.toString()),
      latency: new Map(
        Object.entries(doc.latency ?? {}).map(([key, count]) => [
          Number(key.slice(BUCKET.length)),
          num(count),
        ]),
      ),
    }));
  }
}
