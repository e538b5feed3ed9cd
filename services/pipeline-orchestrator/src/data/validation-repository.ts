import type { Connection } from 'mongoose';
import type { Envelope } from '@pack/contracts';
import { isDuplicateKey, outboxFields, withOutbox } from '@pack/db';
import type { ValidationRecord, ValidationStore } from '../domain/side-processors/store';

export const VALIDATIONS_COLLECTION = 'validations';

/** One document per Change Instance validated, carrying its own outbox (request, then decision). */
export class ValidationRepository implements ValidationStore {
  private readonly validations;

  constructor(connection: Connection) {
    this.validations = connection.collection<ValidationRecord>(VALIDATIONS_COLLECTION);
  }

  async insert(record: ValidationRecord, request: Envelope): Promise<boolean> {
    try {
      await this.validations.insertOne({ ...record, ...outboxFields(request) });
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  async settle(id: number, set: Partial<ValidationRecord>, events: Envelope[]): Promise<boolean> {
    let update: Record<string, unknown> = { $set: set };
    if (events.length > 0) update = withOutbox(update, ...events);
    const result = await this.validations.updateOne({ _id: id, state: 'requested' }, update);
    return result.modifiedCount === 1;
  }
}
