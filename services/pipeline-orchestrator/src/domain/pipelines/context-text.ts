import { STAGES, type Stage } from '@pack/contracts';
import type { PipelineRecord, StageState } from '../records/pipeline-records';
import type { ExecutionNote } from './store';

/** What the context says of one earlier run (or of notes on a run no pipeline is kept for). */
export interface ContextRun {
  run: number;
  /** The pipeline of the run; null for notes on a run the item has no pipeline of (feedback before run 1). */
  pipeline: PipelineRecord | null;
  /** The run's declaration is the one the new run works on (its text is then not repeated). */
  current_declaration: boolean;
  feedback: string[];
  optimizer_notes: string[];
}

/** One stage of an earlier run as the context tells it. */
export interface ContextStage {
  stage: Stage;
  state: StageState | null;
  origin: 'generated' | 'pushed' | null;
  error: string | null;
  pack_data_json: string | null;
}

export const contextStages = (pipeline: PipelineRecord): ContextStage[] =>
  STAGES.map((stage) => {
    const record = pipeline.stages[stage];
    return {
      stage,
      state: record.state,
      origin: record.origin ?? (record.state === null ? null : 'generated'),
      error: record.error,
      pack_data_json: record.pack_data_json,
    };
  });

/** The item's earlier runs and notes grouped by run, newest first. */
export function contextRuns(
  pipelines: readonly PipelineRecord[],
  notes: readonly ExecutionNote[],
  currentDeclaration: number | null,
): ContextRun[] {
  const numbers = new Set([...pipelines.map((p) => p.run), ...notes.map((n) => n.run)]);
  return [...numbers]
    .sort((a, b) => b - a)
    .map((run) => {
      const pipeline = pipelines.find((candidate) => candidate.run === run) ?? null;
      // Notes come newest first: told in the order they were written.
      const about = notes.filter((note) => note.run === run).reverse();
      return {
        run,
        pipeline,
        current_declaration: pipeline !== null && pipeline.declaration_id === currentDeclaration,
        feedback: about.filter((note) => note.kind === 'feedback').map((note) => note.text),
        optimizer_notes: about.filter((note) => note.kind === 'optimizer').map((note) => note.text),
      };
    });
}

/** The text of one run: header, declaration, each stage in order, then feedback and optimizer notes. */
export function runText(entry: ContextRun): string {
  const lines: string[] = [];
  const { pipeline } = entry;
  if (pipeline) {
    const superseded =
      pipeline.superseded_by !== undefined ? ', superseded by a newer run while it was running' : '';
    const declaration = entry.current_declaration
      ? `on declaration ${pipeline.declaration_id}, the current one`
      : `on declaration ${pipeline.declaration_id}`;
    lines.push(`Run ${entry.run} (pipeline ${pipeline._id}, ${declaration}${superseded}):`);
    if (!entry.current_declaration) lines.push(`  Declaration: ${pipeline.declaration_json}`);
    for (const stage of contextStages(pipeline)) {
      if (stage.state === null) {
        lines.push(`- ${stage.stage}: not run`);
        continue;
      }
      lines.push(`- ${stage.stage}: ${stage.state}${stage.error ? ` (error: ${stage.error})` : ''}`);
      if (stage.pack_data_json !== null)
        lines.push(
          stage.origin === 'pushed'
            ? `  PackData pushed from outside: ${stage.pack_data_json}`
            : `  PackData generated: ${stage.pack_data_json}`,
        );
    }
  }
  for (const text of entry.feedback) lines.push(`Feedback on run ${entry.run}: ${text}`);
  for (const text of entry.optimizer_notes)
    lines.push(`Pack Optimizer notes after run ${entry.run}: ${text}`);
  return lines.join('\n');
}

export const contextHeader = (serviceItemId: number) =>
  `Execution context of Service Item ${serviceItemId}: its earlier runs, oldest first, each with the declaration it ran on, ` +
  "every stage's state, error and PackData (generated, or pushed from outside), then the feedback and Pack Optimizer notes on that run.";

export const cutMarker = (run: number, budget: number) =>
  `\n[... run ${run} is cut here: the context budget of ${budget} characters is spent]`;

/** At most this long: the line naming the runs left out (two run numbers and the budget). */
const LEFT_OUT_LINE_MAX = 160;
const leftOutLine = (runs: readonly number[], budget: number) =>
  `[Runs ${runs.at(-1)} to ${runs[0]} (${runs.length}) are left out: the context budget of ${budget} characters is spent]`;

export interface FittedRun {
  entry: ContextRun;
  text: string;
  cut: boolean;
}

export interface FittedContext {
  text: string;
  /** The runs in the text, oldest first. */
  kept: FittedRun[];
  /** Runs left out of the text, newest first. */
  left_out: number[];
}

/**
 * Fits the runs (newest first) into `budget` characters: the newest run whole first, then each
 * older one whole while it fits; the first that does not is cut with a marker and the older ones
 * are left out, named in one line. The newest run alone over the budget is cut as well.
 */
export function fitContext(header: string, entries: readonly ContextRun[], budget: number): FittedContext {
  const kept: FittedRun[] = [];
  let used = header.length;
  let index = 0;
  for (; index < entries.length; index++) {
    const entry = entries[index]!;
    const text = runText(entry);
    const last = index === entries.length - 1;
    // Room for the left-out line too, unless this is the last run.
    const room = budget - used - 1 - (last ? 0 : LEFT_OUT_LINE_MAX + 1);
    if (text.length <= room) {
      kept.push({ entry, text, cut: false });
      used += text.length + 1;
      continue;
    }
    const marker = cutMarker(entry.run, budget);
    const available = budget - used - 1 - marker.length - (last ? 0 : LEFT_OUT_LINE_MAX + 1);
    // A cut worth reading (or the newest run, which is always told as far as it goes).
    if (kept.length === 0 || available >= 200) {
      kept.push({ entry, text: `${text.slice(0, Math.max(0, available))}${marker}`, cut: true });
      index += 1;
    }
    break;
  }
  const leftOut = entries.slice(index).map((entry) => entry.run);
  const lines = [header];
  if (leftOut.length > 0) lines.push(leftOutLine(leftOut, budget));
  kept.reverse();
  lines.push(...kept.map((run) => run.text));
  return { text: lines.join('\n'), kept, left_out: leftOut };
}
