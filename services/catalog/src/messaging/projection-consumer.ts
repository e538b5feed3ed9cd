import { on, type ConsumerSpec } from '@pack/broker';
import { events } from '@pack/contracts';
import type { ChangeInstanceViews } from '../domain/change-instances/roll-forward';

export const PROJECTION_CONSUMER = 'catalog.change-instance-view';

/**
 * The catalog reads its own change-instance events to roll the change instance view forward.
 * The request that made a change normally did so already (then this is a cheap no-op); if it
 * died between recording the change and updating the view, the event, which the outbox
 * guarantees, finishes the job.
 */
export function projectionConsumer(changeInstances: ChangeInstanceViews): ConsumerSpec {
  const rollForward = async (data: { change_instance_id: number }) => {
    await changeInstances.rollForward(data.change_instance_id);
  };
  return {
    name: PROJECTION_CONSUMER,
    handlers: [
      on(events.changeInstanceCreated, rollForward),
      on(events.changeInstanceStateChanged, rollForward),
    ],
  };
}
