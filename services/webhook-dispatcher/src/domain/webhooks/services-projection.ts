import { serviceProjectionOf, type EventData, type events } from '@pack/contracts';
import type { ServiceStore, WebhookStore } from './store';
import type { WebhookChangeSink } from './webhook-lookup';

type ServiceChanged = EventData<typeof events.serviceChanged>;

/** The `disabled_reason` of the webhooks of a deleted Service. */
export const SERVICE_DELETED = 'its Service was deleted';

/**
 * Which Services exist and who owns them, kept from the catalog's service.changed events (the
 * dispatcher never reads the catalog's database). Events may arrive out of order or twice: the
 * highest version wins, so applying one again changes nothing.
 */
export class ServicesProjection {
  constructor(
    private readonly services: ServiceStore,
    private readonly webhooks: WebhookStore,
    private readonly changes: WebhookChangeSink,
  ) {}

  async apply(data: ServiceChanged): Promise<void> {
    const applied = await this.services.apply(serviceProjectionOf(data));
    // A deleted Service's webhooks are disabled, not removed: they stop firing and their owner
    // and the admins can still read them and their responses. Done on every delivery
    // of the tombstone (a redelivery finds nothing left to disable).
    if (data.deleted) {
      const disabled = await this.webhooks.disableForService(data.service_id, SERVICE_DELETED);
      if (disabled > 0) await this.forget(data.service_id);
      return;
    }
    if (!applied) return;
    if ((await this.webhooks.reassign(data.service_id, data.owner)) > 0) await this.forget(data.service_id);
  }

  /** Every replica forgets its cached webhooks of the Service (0031). */
  private forget(serviceId: number): Promise<void> {
    return this.changes.changed({ service_id: serviceId, webhook_id: null, version: null, deleted: false });
  }
}
