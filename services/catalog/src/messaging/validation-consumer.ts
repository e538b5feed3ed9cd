import { on, type ConsumerSpec } from '@pack/broker';
import { events, type OncePerEvent } from '@pack/contracts';
import type { ChangeInstanceMoves } from '../domain/change-instances/move-change-instance';

export const VALIDATION_CONSUMER = 'catalog.validation-decisions';

/**
 * The Change Instance Validator's decisions (published by the pipeline side). Applied once per
 * event id; a decision about an instance the Service Owner already decided is dropped.
 */
export function validationConsumer(once: OncePerEvent, changeInstances: ChangeInstanceMoves): ConsumerSpec {
  return {
    name: VALIDATION_CONSUMER,
    handlers: [
      on(
        events.changeInstanceValidationDecided,
        once(VALIDATION_CONSUMER, async (data) => {
          await changeInstances.applyValidatorDecision(data.change_instance_id, data.decision, data.reasons);
        }),
      ),
    ],
  };
}
