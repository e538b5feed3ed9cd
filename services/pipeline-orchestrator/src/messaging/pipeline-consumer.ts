import { on, type ConsumerSpec } from '@pack/broker';
import { createEnvelope, events, generateResultEvent, type Envelope } from '@pack/contracts';
import type { Budgets } from '../domain/budgets/budgets';
import type { Pipelines } from '../domain/pipelines/pipelines';
import type { StageResults } from '../domain/stage-results/stage-results';
import { SOURCE } from '../domain/records/source';
import { resultKind } from './result-routing';

export const PIPELINE_CONSUMER = 'pipeline-orchestrator.pipelines';

/**
 * Approvals (rule 6, the items' latest approved declarations) and the generate results of stages
 * (`llm.generate.completed.v1`, docs/decisions/0036). Both are idempotent without markers: a
 * repeated approval collides on the pipeline's unique origin, a repeated result finds its stage
 * moved on (docs/decisions/0024).
 */
export function pipelineConsumer(
  pipelines: Pick<Pipelines, 'changeInstance'>,
  results: Pick<StageResults, 'result'>,
  budgets: Pick<Budgets, 'count'>,
  publish: (envelope: Envelope) => Promise<void>,
): ConsumerSpec {
  return {
    name: PIPELINE_CONSUMER,
    handlers: [
      on(events.changeInstanceCreated, (data) => pipelines.changeInstance(data)),
      on(events.changeInstanceStateChanged, (data) => pipelines.changeInstance(data)),
      on(events.llmGenerateCompleted, async (data, envelope) => {
        const kind = resultKind(data);
        // Counted beside the result's handling: a next stage's start that reads the spend waits
        // for this count first, so it sees this call's cost (0046); a redelivery does both again.
        if (kind === 'stage') {
          return bothEnded(budgets.count(data), results.result(data));
        }
        // A validator's or optimizer's result without `reply_kind` (rolling upgrade: a request
        // or an llm-gateway of before) comes only here now: told apart by its request id as
        // before, it goes on under its kind's own type to the side-processor queue, which
        // handles it in arrival order (republished before this message is acknowledged).
        await publish(
          createEnvelope(
            generateResultEvent(kind),
            { ...data, reply_kind: kind },
            { source: SOURCE, correlationId: envelope.correlationid, id: `${envelope.id}-${kind}` },
          ),
        );
      }),
    ],
  };
}

/** Waits for both (neither left running when the message is settled); then the first failure, if any. */
async function bothEnded(...work: Promise<void>[]): Promise<void> {
  const failure = (await Promise.allSettled(work)).find((each) => each.status === 'rejected');
  if (failure) throw failure.reason;
}
