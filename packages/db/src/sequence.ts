import type { Connection } from 'mongoose';
import { claim, isDuplicateKey } from './claims';

/**
 * Integer ids per collection (the public API uses integers), unique across replicas on MongoDB
 * and on FerretDB alike. The counter's `$inc` proposes a number (atomic on MongoDB and on our
 * FerretDB build; stock FerretDB v1 could hand one number to two callers, decision 0002); the
 * unique claim `<sequence>:<n>` decides who gets it, and a loser simply asks for the next number.
 */
export async function nextId(connection: Connection, sequence: string): Promise<number> {
  const counters = connection.collection<{ _id: string; seq: number }>('counters');
  for (let attempt = 0; attempt < 100; attempt += 1) {
    let proposed: number;
    try {
      const result = await counters.findOneAndUpdate(
        { _id: sequence },
        { $inc: { seq: 1 } },
        { upsert: true, returnDocument: 'after' },
      );
      if (!result) continue;
      proposed = result.seq;
    } catch (error) {
      // Two first-ever upserts of the counter race to insert it; the loser tries again.
      if (isDuplicateKey(error)) continue;
      throw error;
    }
    if (await claim(connection, `${sequence}:${proposed}`)) return proposed;
  }
  throw new Error(`could not allocate an id for ${sequence}`);
}
