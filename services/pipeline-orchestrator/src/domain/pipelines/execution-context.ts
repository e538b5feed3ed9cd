import { STAGES } from '@pack/contracts';
import type { PipelineRecord } from '../records/pipeline-records';
import type { ExecutionContextStore } from './store';

/** Bounds that keep the CONFIG prompt small whatever the item's history. */
export const CONTEXT_LIMITS = { runs: 5, notes: 10, text: 2000 } as const;

export const clip = (text: string) =>
  text.length <= CONTEXT_LIMITS.text ? text : `${text.slice(0, CONTEXT_LIMITS.text)}... (cut)`;

/**
 * The execution context of a Service Item (DESIGN section 7): earlier runs' stage outcomes and
 * errors, PackData pushed from outside, retrigger feedback and Pack Optimizer notes, oldest
 * first. It goes into a new run's CONFIG prompt so the processor can correct the configuration.
 */
export class ExecutionContext {
  constructor(private readonly store: ExecutionContextStore) {}

  /**
   * `run`, the new run's number as it is being taken: run 1 has no earlier run (run numbers start
   * at 1), so its runs are not read; notes are (feedback given before any run is kept as run 0).
   */
  async render(serviceItemId: number, run?: Promise<number>): Promise<string | null> {
    const [runs, notes] = await Promise.all([
      (run ?? Promise.resolve(null)).then((number) =>
        number === 1 ? [] : this.store.recentRuns(serviceItemId, CONTEXT_LIMITS.runs),
      ),
      this.store.notes(serviceItemId, CONTEXT_LIMITS.notes),
    ]);
    if (runs.length === 0 && notes.length === 0) return null;
    const lines = [
      `Execution context of Service Item ${serviceItemId} (earlier runs, feedback and Pack Optimizer notes, oldest first):`,
    ];
    const runNumbers = [...new Set([...runs.map((run) => run.run), ...notes.map((note) => note.run)])];
    for (const number of runNumbers.sort((a, b) => a - b)) {
      const run = runs.find((candidate) => candidate.run === number);
      if (run) lines.push(...runOutcome(run));
      for (const note of notes.filter((candidate) => candidate.run === number).reverse())
        lines.push(
          note.kind === 'feedback'
            ? `Feedback on run ${number}: ${clip(note.text)}`
            : `Pack Optimizer notes after run ${number}: ${clip(note.text)}`,
        );
    }
    return lines.join('\n');
  }
}

function runOutcome(run: PipelineRecord): string[] {
  const lines = [`Run ${run.run}:`];
  for (const stage of STAGES) {
    const record = run.stages[stage];
    if (record.state === null) {
      lines.push(`- ${stage}: not run`);
      continue;
    }
    const error = record.error ? ` (error: ${clip(record.error)})` : '';
    lines.push(`- ${stage}: ${record.state}${error}`);
    if (record.origin === 'pushed' && record.pack_data_json !== null)
      lines.push(`  PackData pushed from outside: ${clip(record.pack_data_json)}`);
  }
  return lines;
}
