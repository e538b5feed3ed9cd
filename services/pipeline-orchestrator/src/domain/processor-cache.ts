import type { ProcessorKind } from '@pack/contracts';
import type { ProcessorRecord } from './model';
import type { ActiveProcessors } from './pipeline-deps';

interface Entry {
  found: Promise<ProcessorRecord | null>;
  at: number;
}

/**
 * The active processor per Service and kind, remembered by this replica for the path a stage's
 * result takes to the next stage (docs/decisions/0028, 2026-11-24): one database read less per
 * stage. Forgotten at once when this replica changes a processor of the Service, when any
 * replica's processor event for the Service arrives (a broadcast queue per replica), and
 * entirely when the broker connection is made again (events missed meanwhile); `ttlMs` bounds
 * what a lost event could leave. Requests from people (triggers, pushes) read the database.
 */
export class ProcessorCache implements ActiveProcessors {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly source: ActiveProcessors,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  active(serviceId: number, kind: ProcessorKind): Promise<ProcessorRecord | null> {
    if (this.ttlMs <= 0) return this.source.active(serviceId, kind);
    const key = `${serviceId}:${kind}`;
    const entry = this.entries.get(key);
    if (entry && this.now() - entry.at < this.ttlMs) return entry.found;
    const found = this.source.active(serviceId, kind);
    const fresh = { found, at: this.now() };
    this.entries.set(key, fresh);
    // A failed read is not remembered: the next call asks again.
    found.catch(() => {
      if (this.entries.get(key) === fresh) this.entries.delete(key);
    });
    return found;
  }

  /** Every kind of the Service. */
  forget(serviceId: number): void {
    for (const key of this.entries.keys()) if (key.startsWith(`${serviceId}:`)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
