import { on, type ConsumerSpec } from '@pack/broker';
import { events } from '@pack/contracts';
import type { Budgets } from '../domain/budgets/budgets';
import type { PackOptimizer } from '../domain/side-processors/optimizer';
import type { ChangeInstanceValidator } from '../domain/side-processors/validator';
import { resultKind } from './result-routing';

export const SIDE_PROCESSOR_CONSUMER = 'pipeline-orchestrator.side-processors';

/**
 * The processors beside the stages: the Change Instance Validator (new instances, its results)
 * and the Pack Optimizer (its results). Each kind of generate result has its own event type, so
 * this queue receives only these two (docs/decisions/0036). Both are idempotent by their own
 * records.
 */
export function sideProcessorConsumer(
  validator: ChangeInstanceValidator,
  optimizer: PackOptimizer,
  budgets: Pick<Budgets, 'count'>,
): ConsumerSpec {
  const counted = async <T>(data: Parameters<Budgets['count']>[0], then: () => Promise<T>) => {
    await budgets.count(data);
    return then();
  };
  return {
    name: SIDE_PROCESSOR_CONSUMER,
    // Rare messages, one at a time in arrival order (a repeat is then plainly a repeat).
    prefetch: 1,
    handlers: [
      on(events.changeInstanceCreated, (data) => validator.created(data)),
      on(events.llmValidationCompleted, (data) => counted(data, () => validator.result(data))),
      on(events.llmOptimizationCompleted, (data) => counted(data, () => optimizer.result(data))),
    ],
    // Before 0036 this queue was bound to every generate result and told its own apart by request
    // id: the binding is removed at start; what still comes in on it (queued before the upgrade,
    // or routed by a replica of before during a rolling upgrade) is handled as it was then.
    retired: [
      on(events.llmGenerateCompleted, async (data) => {
        const kind = resultKind(data);
        await budgets.count(data);
        if (kind === 'validation') await validator.result(data);
        else if (kind === 'optimization') await optimizer.result(data);
      }),
    ],
  };
}
