import { isDeepStrictEqual } from 'node:util';
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

/**
 * Waits until the pipeline sweeper has nothing left to let go of: no pipeline is watched while
 * none of its stages runs. A run's end unwatches its pipeline in the update that clears its
 * events, but when the outbox relay published and cleared them first the sweeper unwatches it on
 * its next round (every few seconds), in the background. Services without pipelines have
 * nothing to wait for.
 */
export async function sweepsSettled(service: StoredOwner): Promise<void> {
  const pipelines = service.context.mongo.connection.collection('pipelines');
  const running = (stage: unknown) =>
    ['SCHEDULED', 'WAITING_FOR_RESPONSE'].includes((stage as { state?: string } | undefined)?.state ?? '');
  await waitFor(
    async () =>
      (await pipelines.find({ watched: true }, { projection: { stages: 1 } }).toArray()).every((pipeline) =>
        Object.values((pipeline.stages as Record<string, unknown> | undefined) ?? {}).some(running),
      ),
    { what: 'the sweeper to let go of every idle pipeline' },
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

type Dump = Record<string, Record<string, unknown>[]>;

/**
 * The documents that differ between two `storedDocuments` dumps, by collection and id, each with
 * what it was and what it became (`null` where it did not exist): empty when nothing changed.
 */
export function changedDocuments(before: Dump, after: Dump): Record<string, unknown[]> {
  const changed: Record<string, unknown[]> = {};
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = new Map((before[name] ?? []).map((document) => [String(document._id), document]));
    const now = new Map((after[name] ?? []).map((document) => [String(document._id), document]));
    const ids = [...new Set([...was.keys(), ...now.keys()])];
    const differing = ids
      .filter((id) => !isDeepStrictEqual(was.get(id), now.get(id)))
      .map((id) => ({ _id: id, before: was.get(id) ?? null, after: now.get(id) ?? null }));
    if (differing.length > 0) changed[name] = differing;
  }
  return changed;
}
