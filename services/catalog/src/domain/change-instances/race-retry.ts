import type { Logger } from '@pack/logging';
import { LOST_RACE, retryOnConflict } from '@pack/reliability';
import { currentInstance } from './change-records';
import type { ChangeInstanceRecord, TransitionRecord } from '../model';
import type { CatalogStore } from '../store';

/** How often a change that lost a race is decided again from what is stored now. */
export const MAX_RACE_RETRIES = 5;

/** What a decision answers when its conditional write found that another change came first. */
export { LOST_RACE };

/**
 * retryOnConflict (@pack/reliability) with the catalog's limit: `decide` reads what is stored,
 * decides from it and writes conditionally (a unique transition insert, a version-conditional
 * update); when another change came first it answers LOST_RACE and is called again, at most
 * `tries` times in all (1 + MAX_RACE_RETRIES unless told). Then `keptChanging` is thrown.
 */
export function decideUntilWritten<T>(
  decide: () => Promise<T | typeof LOST_RACE>,
  keptChanging: () => Error,
  tries = 1 + MAX_RACE_RETRIES,
): Promise<T> {
  return retryOnConflict(decide, { tries, keptChanging });
}

/**
 * A Change Instance's transition records and its current state, as an event handler decides
 * from them; null (logged as `<news> for an unknown change instance ignored`) when there is none.
 */
export async function currentOrIgnored(
  store: CatalogStore,
  logger: Logger,
  id: number,
  news: string,
): Promise<{ records: TransitionRecord[]; instance: ChangeInstanceRecord } | null> {
  const records = await store.transitionsOf(id);
  const instance = currentInstance(records);
  if (instance) return { records, instance };
  logger.warn({ change_instance_id: id }, `${news} for an unknown change instance ignored`);
  return null;
}
