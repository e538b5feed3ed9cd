import type { Connection } from 'mongoose';
import { isDuplicateKey } from '@pack/db';
import { LOST_RACE, retryOnConflict } from '@pack/reliability';
import type { SlotHolder } from '../domain/records/processor-records';
import type { ActiveSlotStore } from '../domain/processors/store';

export const ACTIVE_SLOTS_COLLECTION = 'active_processors';

interface SlotDocument {
  _id: string;
  processor_id: number;
  since: Date;
}

/** `<service>:<kind>` -> the active processor; the unique `_id` decides concurrent claims. */
export class ActiveSlotRepository implements ActiveSlotStore {
  private readonly slots;

  constructor(connection: Connection) {
    this.slots = connection.collection<SlotDocument>(ACTIVE_SLOTS_COLLECTION);
  }

  async claim(key: string, processorId: number, now: Date): Promise<SlotHolder> {
    return retryOnConflict(
      async () => {
        try {
          await this.slots.insertOne({ _id: key, processor_id: processorId, since: now });
          return { processor_id: processorId, since: now };
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
        }
        const holder = await this.slots.findOne({ _id: key });
        // Released between our insert and this read: claim again.
        return holder ? { processor_id: holder.processor_id, since: holder.since } : LOST_RACE;
      },
      { tries: 10, keptChanging: () => new Error(`could not claim the active slot ${key}`) },
    );
  }

  async takeOver(key: string, from: SlotHolder, to: number, now: Date): Promise<boolean> {
    const moved = await this.slots.updateOne(
      { _id: key, processor_id: from.processor_id, since: from.since },
      { $set: { processor_id: to, since: now } },
    );
    return moved.modifiedCount === 1;
  }

  async release(key: string, processorId: number): Promise<void> {
    await this.slots.deleteOne({ _id: key, processor_id: processorId });
  }
}
