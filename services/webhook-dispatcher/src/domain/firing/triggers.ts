import { randomUUID } from 'node:crypto';
import type {
  ChangeInstanceState,
  EventData,
  Principal,
  WebhookBody,
  WebhookTriggerResult,
  events,
} from '@pack/contracts';
import { ConflictError, NotFoundError, ValidationError } from '@pack/errors';
import type { Firing } from './fire';
import type { ServiceRecord, WebhookRecord } from '../model';
import type { ServiceStore, WebhookStore } from '../webhooks/store';
import type { Webhooks } from '../webhooks/webhooks';

type Created = EventData<typeof events.changeInstanceCreated>;
type StateChanged = EventData<typeof events.changeInstanceStateChanged>;

/** A Change Instance as the catalog shows it to the caller; null when the caller cannot see it. */
export type ChangeInstanceLookup = (
  principal: Principal,
  id: number,
) => Promise<{ service_id: number; state: ChangeInstanceState } | null>;

/** Manual triggers without a Change Instance send this as the state. */
export const MANUAL_STATE = 'MANUAL';

/** Where triggers come from: the catalog's events (spec 6) and the manual trigger route. */
export class Triggers {
  constructor(
    private readonly webhooks: Pick<WebhookStore, 'enabledFor'>,
    private readonly services: ServiceStore,
    private readonly access: Webhooks,
    private readonly firing: Firing,
    private readonly lookup: ChangeInstanceLookup,
  ) {}

  /** At submission: webhooks without a state, and those waiting for the state it starts in. */
  async changeInstanceCreated(data: Created, eventId: string, at: Date): Promise<void> {
    await this.fireAll(data, eventId, at, (webhook) =>
      webhook.change_instance_state === null
        ? 'submission'
        : webhook.change_instance_state === data.state
          ? 'state_change'
          : null,
    );
  }

  async changeInstanceStateChanged(data: StateChanged, eventId: string, at: Date): Promise<void> {
    await this.fireAll(data, eventId, at, (webhook) =>
      webhook.change_instance_state === data.state ? 'state_change' : null,
    );
  }

  async manual(
    principal: Principal,
    webhookId: number,
    changeInstanceId?: number,
  ): Promise<WebhookTriggerResult> {
    const webhook = await this.access.visible(principal, webhookId);
    refuseDisabled(webhook);
    const service = await this.services.find(webhook.service_id);
    let state: string = MANUAL_STATE;
    if (changeInstanceId !== undefined) {
      const instance = await this.lookup(principal, changeInstanceId);
      if (!instance) throw new NotFoundError(`Change Instance ${changeInstanceId} does not exist`);
      if (instance.service_id !== webhook.service_id)
        throw new ValidationError('change instance of another service', {
          errors: { change_instance_id: ["is not a Change Instance of the webhook's Service"] },
        });
      state = instance.state;
    }
    return this.firing.trigger(webhook, {
      key: randomUUID(),
      mode: 'manual',
      body: bodyOf(webhook, service, state),
      change_instance_id: changeInstanceId ?? null,
      event_at: new Date(),
    });
  }

  private async fireAll(
    data: Created | StateChanged,
    eventId: string,
    at: Date,
    modeOf: (webhook: WebhookRecord) => 'submission' | 'state_change' | null,
  ): Promise<void> {
    const webhooks = await this.webhooks.enabledFor(data.service.id);
    const body: WebhookBody = {
      id: data.service.id,
      name: data.service.name,
      owner: data.service.owner,
      state: data.state,
    };
    await Promise.all(
      webhooks.map(async (webhook) => {
        const mode = modeOf(webhook);
        if (!mode) return;
        await this.firing.trigger(webhook, {
          key: eventId,
          mode,
          body,
          change_instance_id: data.change_instance_id,
          event_at: at,
        });
      }),
    );
  }
}

function bodyOf(webhook: WebhookRecord, service: ServiceRecord | null, state: string): WebhookBody {
  return {
    id: webhook.service_id,
    name: service?.name ?? '',
    owner: { id: service?.owner_id ?? webhook.owner_id, name: service?.owner_name ?? webhook.owner_name },
    state,
  };
}

/** A disabled webhook fires for nobody: a manual trigger is refused, naming what to change. */
function refuseDisabled(webhook: WebhookRecord): void {
  if (webhook.enabled) return;
  const why = webhook.disabled_reason ? ` (${webhook.disabled_reason})` : '';
  throw new ConflictError(`webhook ${webhook._id} is disabled${why}: enable it to trigger it`, {
    errors: { enabled: [`is false${why}; set enabled: true (PATCH the webhook) to trigger it`] },
  });
}
