import type { Connection } from 'mongoose';

/**
 * Integer ids per collection (the public API uses integers). One atomic upserting $inc per id,
 * safe across replicas.
 */
export async function nextId(connection: Connection, sequence: string): Promise<number> {
  const result = await connection
    .collection<{ _id: string; seq: number }>('counters')
    .findOneAndUpdate({ _id: sequence }, { $inc: { seq: 1 } }, { upsert: true, returnDocument: 'after' });
  if (!result) throw new Error(`sequence ${sequence} returned nothing`);
  return result.seq;
}
