import { on, type ConsumerSpec } from '@pack/broker';
import { events } from '@pack/contracts';
import { OPTIMIZER_REQUEST_PREFIX, type PackOptimizer } from '../domain/side-processors/optimizer';
import { VALIDATOR_REQUEST_PREFIX, type ChangeInstanceValidator } from '../domain/side-processors/validator';

export const SIDE_PROCESSOR_CONSUMER = 'pipeline-orchestrator.side-processors';

/**
 * The processors beside the stages: the Change Instance Validator (new instances, its results)
 * and the Pack Optimizer (its results). Generate results are told apart by their request id;
 * stage results go to the pipeline consumer. Both are idempotent by their own records.
 */
export function sideProcessorConsumer(
  validator: ChangeInstanceValidator,
  optimizer: PackOptimizer,
): ConsumerSpec {
  return {
    name: SIDE_PROCESSOR_CONSUMER,
    // Rare messages, one at a time in arrival order (a repeat is then plainly a repeat).
    prefetch: 1,
    handlers: [
      on(events.changeInstanceCreated, (data) => validator.created(data)),
      on(events.llmGenerateCompleted, async (data) => {
        if (data.request_id.startsWith(VALIDATOR_REQUEST_PREFIX)) await validator.result(data);
        else if (data.request_id.startsWith(OPTIMIZER_REQUEST_PREFIX)) await optimizer.result(data);
      }),
    ],
  };
}
