import type { EventData, events } from '@pack/contracts';
import type { ServiceStore, WebhookStore } from './ports';
import type { WebhookChangeSink } from './webhook-lookup';

type ServiceChanged = EventData<typeof events.serviceChanged>;

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
    const applied = await this.services.apply({
      _id: data.service_id,
      name: data.name,
      owner_id: data.owner.id,
      owner_name: data.owner.name,
      deleted: data.deleted,
      version: data.version,
    });
    if (!applied || data.deleted) return;
    if ((await this.webhooks.reassign(data.service_id, data.owner)) > 0)
      await this.changes.changed({
        service_id: data.service_id,
        webhook_id: null,
        version: null,
        deleted: false,
      });
  }
}
