import { on, type ConsumerSpec } from '@pack/broker';
import { events, type OncePerEvent } from '@pack/contracts';
import type { ChangeInstanceMoves } from '../domain/change-instances/move-change-instance';
import type { ValidationOutcomes } from '../domain/change-instances/validation-outcomes';

export const VALIDATION_CONSUMER = 'catalog.validation-decisions';

/**
 * The Change Instance Validator's decisions (published by the pipeline side). Applied once per
 * event id; a decision about an instance the Service Owner already decided is dropped. A
 * validation without a decision is recorded on the instance with its reason (0056).
 */
export function validationConsumer(
  once: OncePerEvent,
  changeInstances: ChangeInstanceMoves,
  outcomes: ValidationOutcomes,
): ConsumerSpec {
  return {
    name: VALIDATION_CONSUMER,
    handlers: [
      on(
        events.changeInstanceValidationDecided,
        once(VALIDATION_CONSUMER, async (data) => {
          await changeInstances.applyValidatorDecision(data.change_instance_id, data.decision, data.reasons);
        }),
      ),
      on(
        events.changeInstanceValidationUndecided,
        once(VALIDATION_CONSUMER, async (data) => {
          await outcomes.undecided(data);
        }),
      ),
    ],
  };
}
