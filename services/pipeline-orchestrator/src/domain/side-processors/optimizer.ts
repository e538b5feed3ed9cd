import { STAGES, type Envelope } from '@pack/contracts';
import type { Logger } from '@pack/logging';
import type { AiSwitches } from '../records/ai-switches';
import type { BudgetGate } from '../budgets/budgets';
import type { ExecutionContextStore } from '../pipelines/store';
import type { ActiveProcessors, ProcessorRecord } from '../records/processor-records';
import type { GenerateResult, PipelineRecord, RunOutcome } from '../records/pipeline-records';
import type { PipelineStore } from '../records/store';
import { progressEvents, progressVersion } from '../stage-moves/progress';
import { generateRequest } from '../stage-requests/stage-request';

export const OPTIMIZER_REQUEST_PREFIX = 'optimizer-';

/**
 * The end of a run (a stage OK with no later active processor, or a stage FAILED): its Change Instance's progress and, when the
 * Service has an active Pack Optimizer, a request for free-form notes on the run (spec 2.4: no
 * schema). Both go out with the move that ends the run. The notes come back as a generate result
 * and are kept in the item's execution context (execution-context.ts), which the next run's CONFIG
 * prompt carries; a repeated result is one note (its id is the request's). While AI processors
 * are switched off (`show_ai_processor`, 0040) no optimizer is asked; the progress still goes out.
 */
export class PackOptimizer {
  constructor(
    private readonly deps: {
      processors: ActiveProcessors;
      pipelines: Pick<PipelineStore, 'find'>;
      context: Pick<ExecutionContextStore, 'addNote'>;
      switches: Pick<AiSwitches, 'processors'>;
      budget: BudgetGate;
      logger: Logger;
    },
  ) {}

  /** `pipeline` as the ending move leaves it; `known`: its Service's optimizer, if looked up already. */
  async finishing(
    pipeline: PipelineRecord,
    outcome: RunOutcome,
    reasons: string[],
    known?: ProcessorRecord | null,
  ): Promise<Envelope[]> {
    const progress = progressEvents(pipeline, outcome, reasons);
    if (!this.deps.switches.processors()) return progress;
    const optimizer =
      known !== undefined ? known : await this.deps.processors.active(pipeline.service_id, 'pack_optimizer');
    if (!optimizer) return progress;
    // The Service's AI budget is spent (0046): no notes are asked for.
    if ((await this.deps.budget.exhausted(pipeline.service_id)) !== null) return progress;
    const requestId = `${OPTIMIZER_REQUEST_PREFIX}${pipeline._id}-${progressVersion(pipeline, outcome)}`;
    const request = generateRequest({
      requestId,
      processor: optimizer,
      user: [runReport(pipeline, outcome)],
      schema: null,
      replyKind: 'optimization',
      correlationId: `pipeline-${pipeline._id}`,
    });
    return [...progress, request];
  }

  async result(result: GenerateResult): Promise<void> {
    const pipelineId = Number(result.request_id.slice(OPTIMIZER_REQUEST_PREFIX.length).split('-')[0]);
    const pipeline = Number.isSafeInteger(pipelineId) ? await this.deps.pipelines.find(pipelineId) : null;
    if (!pipeline) return;
    const text = (result.output ?? '').trim();
    if (!result.ok || text === '') {
      this.deps.logger.warn(
        { pipeline_id: pipelineId, error: result.error },
        'the pack optimizer gave no notes for this run',
      );
      return;
    }
    await this.deps.context.addNote({
      _id: `optimizer:${result.request_id}`,
      service_item_id: pipeline.service_item_id,
      kind: 'optimizer',
      run: pipeline.run,
      text,
      created_at: new Date(),
      // Listed by Service (optimizer-notes.ts): the optimizer's document, newest first.
      service_id: pipeline.service_id,
      pipeline_id: pipeline._id,
      processor_id: result.processor_id,
    });
  }
}

/** Each text of the run report is cut at this length: the notes are about the run, not a copy of it. */
const REPORT_TEXT_MAX = 2000;
const clip = (text: string) =>
  text.length <= REPORT_TEXT_MAX ? text : `${text.slice(0, REPORT_TEXT_MAX)}... (cut)`;

/** What the optimizer is told about a finished run. */
function runReport(pipeline: PipelineRecord, outcome: RunOutcome): string {
  const lines = [
    `Run ${pipeline.run} of the pipeline of Service Item ${pipeline.service_item_id} ended ${outcome}.`,
    `Declaration:\n${clip(pipeline.declaration_json)}`,
  ];
  for (const stage of STAGES) {
    const record = pipeline.stages[stage];
    lines.push(
      `${stage}: ${record.state ?? 'not run'}${record.error ? ` (error: ${clip(record.error)})` : ''}`,
    );
    if (record.pack_data_json !== null) lines.push(`${stage} PackData: ${clip(record.pack_data_json)}`);
  }
  if (pipeline.execution_context)
    lines.push(`Context given to this run's CONFIG:\n${pipeline.execution_context}`);
  lines.push('Write notes and recommendations that would make the next runs succeed.');
  return lines.join('\n');
}
