import type { Stage } from '@pack/contracts';
import { carrierOf, context, contextOf, startSpan, trace, type TraceCarrier } from '@pack/tracing';
import type { PipelineRecord } from '../records/pipeline-records';
import type { ProcessorRecord } from '../records/processor-records';

/**
 * A `pack.stage` span (service item, stage, run, processor) around building a stage's generate
 * request, so the request event carries it: the LLM call and the result that follow are its
 * descendants. `phase` says whether the stage starts or its request is sent again; a resend
 * continues the trace stored with the stage (`parent`), not the sweeper's timer. Returns what
 * `build` returned and the span's context, to be stored with the stage.
 */
export function inStageSpan<T>(
  phase: 'start' | 'resend',
  pipeline: PipelineRecord,
  stage: Stage,
  processor: ProcessorRecord,
  attempt: number,
  parent: TraceCarrier | undefined,
  build: () => T,
): { built: T; trace: TraceCarrier } {
  const span = startSpan('pack.stage', {
    parent: parent?.traceparent ? contextOf(parent) : context.active(),
    attributes: {
      'pack.stage.phase': phase,
      'pack.service_item.id': pipeline.service_item_id,
      'pack.pipeline.id': pipeline._id,
      'pack.stage': stage,
      'pack.run': pipeline.run,
      'pack.stage.attempt': attempt,
      'pack.processor.id': processor._id,
      'pack.processor.kind': processor.kind,
    },
  });
  const active = trace.setSpan(context.active(), span);
  try {
    return { built: context.with(active, build), trace: carrierOf(active) };
  } finally {
    span.end();
  }
}
