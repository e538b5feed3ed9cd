import type { ProcessorKind } from '@pack/contracts';
import { ConflictError } from '@pack/errors';
import type { ActiveSlotStore, ProcessorStore } from './store';

/**
 * How long a fresh claim counts as an activation in progress. A claim older than this whose
 * holder is not active is what a crash between claiming and activating left behind.
 */
export const ACTIVATION_LEASE_MS = 30_000;

export function slotKey(serviceId: number, kind: ProcessorKind): string {
  return `${serviceId}:${kind}`;
}

/**
 * At most one active processor per Service and kind (DESIGN section 7), decided across replicas
 * by the slot's unique key: the processor that holds the slot may be active, every other gets 409.
 */
export class ActiveSlots {
  constructor(
    private readonly slots: ActiveSlotStore,
    private readonly processors: ProcessorStore,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Takes the slot for `processorId` or throws ConflictError naming the active processor. */
  async acquire(serviceId: number, kind: ProcessorKind, processorId: number): Promise<void> {
    const key = slotKey(serviceId, kind);
    const now = this.clock();
    const holder = await this.slots.claim(key, processorId, now);
    if (holder.processor_id === processorId) return;
    const other = await this.processors.findAny(holder.processor_id);
    const holds =
      other !== null &&
      !other.deleted &&
      other.active &&
      other.service_id === serviceId &&
      other.kind === kind;
    const stale = !holds && now.getTime() - holder.since.getTime() > ACTIVATION_LEASE_MS;
    if (stale && (await this.slots.takeOver(key, holder, processorId, now))) return;
    throw new ConflictError(
      holds
        ? `AI processor ${holder.processor_id} is already the active ${kind} processor of Service ${serviceId}; deactivate it first`
        : `AI processor ${holder.processor_id} is being activated as the ${kind} processor of Service ${serviceId}; try again shortly`,
    );
  }

  release(serviceId: number, kind: ProcessorKind, processorId: number): Promise<void> {
    return this.slots.release(slotKey(serviceId, kind), processorId);
  }
}
