import type { ActiveProcessors } from '../records/processor-records';

/**
 * Which processor runs a stage: the Service's active processor of the stage's kind; for
 * EXECUTION, an active Universal Executor when there is no active execution processor. The
 * executor always answers with its internal managed schema, whatever schema it was given
 * (spec 2.4, final-schema.ts), and its whole `{status, summary, steps, output}` reply is the
 * stage's PackData.
 */
export function stageProcessors(processors: ActiveProcessors): ActiveProcessors {
  return {
    async active(serviceId, kind) {
      const found = await processors.active(serviceId, kind);
      if (found || kind !== 'execution') return found;
      return processors.active(serviceId, 'universal_executor');
    },
  };
}
