import type { ProcessorKind, Stage } from '@pack/contracts';
import type { ActiveProcessors } from './processor-records';
import { NEXT_STAGE } from './pipeline-records';

/** The processor kind that runs each stage (EXECUTION falls to a Universal Executor, stage-processors.ts). */
export const KIND_OF: Record<Stage, ProcessorKind> = {
  CONFIG: 'config',
  VERIFY: 'verify',
  EXECUTION: 'execution',
};

/**
 * Whether a stage after `stage` has an active processor (`stage` itself has none): the run then
 * waits for PackData pushed from outside (rule 2) rather than ending (docs/decisions/0026).
 */
export async function laterProcessor(
  processors: ActiveProcessors,
  serviceId: number,
  stage: Stage,
): Promise<boolean> {
  for (let later = NEXT_STAGE[stage]; later !== null; later = NEXT_STAGE[later])
    if (await processors.active(serviceId, KIND_OF[later])) return true;
  return false;
}
