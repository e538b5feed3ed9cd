import type { ResponseRecord, Trigger, WebhookRecord } from '../model';
import type { ResponseStore } from '../responses/store';
import { newResponse } from '../responses/response-record';

/** How recorded fires reach delivery (Firing's and ResendFiring's options). */
export interface RecordOptions {
  /** A due fire this replica can send at once: recorded leased, handed to `deliverNow`. */
  leaseFor: () => { token: string; until: Date } | null;
  deliverNow: (record: ResponseRecord, webhook: WebhookRecord) => void;
  /** Gives back a lease from `leaseFor` that was not used. */
  unlease: () => void;
  /** A fire due later: the scheduler should look again by then. */
  dueLater: (due: Date) => void;
}

/** A numbered fire to record: its trigger, its response id and its number. */
export interface FireEntry {
  trigger: Trigger;
  id: string;
  seq: number;
}

/**
 * Writes numbered fires of one webhook in one insert. Fires already due are recorded leased and
 * handed to `deliverNow`; the others wake the scheduler by their due time. A lease whose fire was
 * not inserted (it existed already) is given back. Returns which records were inserted.
 */
export async function recordFires(
  responses: ResponseStore,
  options: RecordOptions,
  webhook: WebhookRecord,
  entries: FireEntry[],
  due: number,
  now: number,
): Promise<boolean[]> {
  const leases = entries.map(() => (due <= now ? options.leaseFor() : null));
  const records = entries.map((entry, index) =>
    newResponse(webhook, entry.trigger, entry.id, entry.seq, new Date(due), leases[index]!),
  );
  let inserted: boolean[] = [];
  try {
    inserted = await responses.insertMany(records);
  } finally {
    leases.forEach((lease, index) => {
      if (lease && !inserted[index]) options.unlease();
    });
  }
  records.forEach((record, index) => {
    if (!inserted[index]) return;
    if (leases[index]) options.deliverNow(record, webhook);
    else options.dueLater(record.due_at);
  });
  return inserted;
}
