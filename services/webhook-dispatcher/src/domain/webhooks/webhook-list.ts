import type { Principal, WebhookListItem, PageStart } from '@pack/contracts';
import type { Page } from '../model';
import type { HealthStore, ServiceStore } from './store';
import type { Webhooks } from './webhooks';

/**
 * The webhook list as people read it: each webhook with its Service's name and the health of its
 * deliveries, read for the whole page at once (one names read, a few index reads per webhook).
 */
export class WebhookList {
  constructor(
    private readonly webhooks: Webhooks,
    private readonly services: Pick<ServiceStore, 'names'>,
    private readonly health: HealthStore,
  ) {}

  async list(principal: Principal, limit: number, start: PageStart): Promise<Page<WebhookListItem>> {
    const page = await this.webhooks.list(principal, limit, start);
    const [names, health] = await Promise.all([
      this.services.names([...new Set(page.items.map((hook) => hook.service))]),
      this.health.healthOf(page.items.map((hook) => hook.id)),
    ]);
    return {
      count: page.count,
      items: page.items.map((hook) => ({
        ...hook,
        service_name: names.get(hook.service) ?? null,
        health: health.get(hook.id)!,
      })),
    };
  }
}
