import { TimedCache } from '@pack/cache';
import type { ProcessorKind } from '@pack/contracts';
import type { ActiveProcessors, ProcessorRecord } from '../records/processor-records';

/**
 * The active processor per Service and kind, remembered by this replica for the path a stage's
 * result takes to the next stage (docs/decisions/0028): one database read less per
 * stage. Forgotten at once when this replica changes a processor of the Service, when any
 * replica's processor event for the Service arrives (a broadcast queue per replica), and
 * entirely when the broker connection is made again (events missed meanwhile); `ttlMs` bounds
 * what a lost event could leave; at most 10,000 Service and kind pairs (@pack/cache's default
 * bound). "No active processor" is kept too, and forgotten the same ways. Requests from people
 * (triggers, pushes) read the database.
 */
export class ProcessorCache implements ActiveProcessors {
  private readonly cache: TimedCache<string, ProcessorRecord | null>;

  constructor(
    private readonly source: ActiveProcessors,
    ttlMs: number,
    now?: () => number,
  ) {
    this.cache = new TimedCache(ttlMs, now);
  }

  active(serviceId: number, kind: ProcessorKind): Promise<ProcessorRecord | null> {
    return this.cache.get(`${serviceId}:${kind}`, () => this.source.active(serviceId, kind));
  }

  /**
   * For an approval's first stage: a remembered active processor, else the database's answer
   * (read again, and kept). A remembered "none" is not trusted here: a processor activated on
   * another replica moments ago must not leave an approval without its run while that
   * replica's event is on its way; a remembered processor is at most as old as rule 1's.
   */
  async activeOrRead(serviceId: number, kind: ProcessorKind): Promise<ProcessorRecord | null> {
    const key = `${serviceId}:${kind}`;
    let read = false;
    const known = await this.cache.get(key, () => {
      read = true;
      return this.source.active(serviceId, kind);
    });
    if (known || read) return known;
    this.cache.forget(key);
    return this.active(serviceId, kind);
  }

  /** Every kind of the Service. */
  forget(serviceId: number): void {
    this.cache.forgetWhere((key) => key.startsWith(`${serviceId}:`));
  }

  clear(): void {
    this.cache.clear();
  }
}
