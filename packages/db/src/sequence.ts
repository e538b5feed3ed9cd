import type { Connection } from 'mongoose';
import { LOST_RACE, retryOnConflict } from '@pack/reliability';
import { claim, isDuplicateKey } from './claims';

/**
 * The next value of a counter: one command. Increasing on MongoDB; on a FerretDB that loses
 * concurrent updates (decision 0002) two callers can get the same value, so use it alone only
 * where a tie is harmless (an ordering), and `nextId` for ids.
 */
export async function nextCounterValue(connection: Connection, sequence: string): Promise<number> {
  const counters = connection.collection<{ _id: string; seq: number }>('counters');
  // Two first-ever upserts of the counter race to insert it; the loser tries again.
  return retryOnConflict(
    async () => {
      const result = await counters.findOneAndUpdate(
        { _id: sequence },
        { $inc: { seq: 1 } },
        { upsert: true, returnDocument: 'after' },
      );
      return result ? result.seq : LOST_RACE;
    },
    {
      tries: 100,
      lostRace: isDuplicateKey,
      keptChanging: () => new Error(`could not advance the counter ${sequence}`),
    },
  );
}

/**
 * Integer ids per collection (the public API uses integers), unique across replicas on MongoDB
 * and on FerretDB alike. The counter's `$inc` proposes a number (atomic on MongoDB and on our
 * FerretDB build; stock FerretDB v1 could hand one number to two callers, decision 0002); the
 * unique claim `<sequence>:<n>` decides who gets it, and a loser simply asks for the next number.
 */
export async function nextId(connection: Connection, sequence: string): Promise<number> {
  return retryOnConflict(
    async () => {
      const proposed = await nextCounterValue(connection, sequence);
      return (await claim(connection, `${sequence}:${proposed}`)) ? proposed : LOST_RACE;
    },
    { tries: 100, keptChanging: () => new Error(`could not allocate an id for ${sequence}`) },
  );
}
