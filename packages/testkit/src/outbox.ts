import type { Connection } from 'mongoose';
import { OUTBOX_COLLECTION, OUTBOX_FIELD, OUTBOX_PENDING_FIELD } from '@pack/db';
import { waitFor } from './waiting';

/** What `outboxDrained` needs of a running service (a RunningService of @pack/runtime). */
export interface OutboxOwner {
  definition: { name: string; outboxCollections?: readonly string[] };
  context: {
    broker: { isReady(): boolean };
    outbox: { flush(): Promise<void> };
    mongo: { connection: Connection };
  };
}

/** How many events the service still has to publish: its outbox collections and the standalone outbox. */
export async function pendingEvents(service: OutboxOwner): Promise<number> {
  const db = service.context.mongo.connection;
  let pending = await db.collection(OUTBOX_COLLECTION).countDocuments();
  for (const name of service.definition.outboxCollections ?? []) {
    pending += await db.collection(name).countDocuments({
      $or: [{ [OUTBOX_PENDING_FIELD]: true }, { [`${OUTBOX_FIELD}.0`]: { $exists: true } }],
    });
  }
  return pending;
}

/**
 * Waits until the service has published everything it recorded: each event has then been
 * confirmed by the broker, so an event tap holds all of them and no more will come for the
 * changes made so far. The collections come from the service definition, so a collection that
 * gains or loses an outbox cannot be forgotten here.
 */
export async function outboxDrained(service: OutboxOwner): Promise<void> {
  await waitFor(() => service.context.broker.isReady(), {
    what: `${service.definition.name} broker connection`,
  });
  await waitFor(
    async () => {
      await service.context.outbox.flush();
      return (await pendingEvents(service)) === 0;
    },
    { what: `${service.definition.name} outbox drained` },
  );
}

/**
 * Waits until the AI budget counts a service made are settled (the orchestrator marks its ledger
 * entries applied and removes their marks within a second of counting, in the background:
 * docs/decisions/0046), so a comparison of stored documents sees only what a request changed.
 * Services without that ledger have nothing to wait for.
 */
export async function budgetsSettled(service: {
  context: { mongo: { connection: Connection } };
}): Promise<void> {
  const db = service.context.mongo.connection;
  await waitFor(
    async () => {
      // The ledger entries (`applied`) and the months (`adding`) share the collection.
      if ((await db.collection('ai_budget_spend').countDocuments({ applied: false })) > 0) return false;
      const months = await db
        .collection('ai_budget_spend')
        .find({ applied: { $exists: false } }, { projection: { adding: 1 } })
        .toArray();
      return months.every((month) => Object.keys((month.adding as object | undefined) ?? {}).length === 0);
    },
    { what: 'the AI budget counts settled' },
  );
}

/** What the stored-document readers need of a running service. */
interface StoredOwner {
  context: { mongo: { connection: Connection } };
}

/** Documents sorted by id (FerretDB returns rows in no fixed order). */
const byId = (documents: Record<string, unknown>[]) =>
  documents.sort((a, b) => String(a._id).localeCompare(String(b._id), 'en', { numeric: true }));

/**
 * Every document of every collection of a service's database, sorted by id: compare two of them
 * to show that a request stored nothing. A probe that waits for one collection reads that one
 * (storedCollection): this reads them all, a command each.
 */
export async function storedDocuments(
  service: StoredOwner,
): Promise<Record<string, Record<string, unknown>[]>> {
  const db = service.context.mongo.connection.db!;
  const dump: Record<string, Record<string, unknown>[]> = {};
  const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map(({ name }) => name).sort();
  for (const name of names) dump[name] = await storedCollection(service, name);
  return dump;
}

/** Every document of one collection of a service's database, sorted by id (none when it does not exist). */
export async function storedCollection(
  service: StoredOwner,
  name: string,
): Promise<Record<string, unknown>[]> {
  return byId(await service.context.mongo.connection.db!.collection(name).find({}).toArray());
}
