import { contextBudget, type ContextBudget } from './context-budget';
import { contextHeader, contextRuns, fitContext, type FittedRun } from './context-text';
import type { ExecutionContextStore } from './store';
import type { ContextTarget } from '../stage-moves/pipeline-deps';

/**
 * What is read of an item's history to build its context. Not the bound: the model's budget
 * (context-budget.ts) decides what is told; these only bound the read.
 */
export const CONTEXT_READ_LIMITS = { runs: 20, notes: 50 } as const;

/** The context a new CONFIG gets, told (`text`) and as its parts (`runs`), with the budget it was fitted to. */
export interface ContextSnapshot {
  service_item_id: number;
  model_id: number | null;
  model_name: string | null;
  budget: ContextBudget;
  /** The second user message of the next CONFIG request; null when the item has no history. */
  text: string | null;
  /** The runs told in `text`, oldest first (`cut` when the text stops inside one). */
  runs: FittedRun[];
  /** Earlier runs not told, for want of budget, newest first. */
  left_out: number[];
}

/**
 * The execution context of a Service Item (spec endpoint rules 3 and 4, DESIGN section 7): its
 * earlier runs, each with the declaration it ran on, every stage's state, error and PackData
 * (generated or pushed: the earlier configuration itself), the retrigger feedback and the Pack
 * Optimizer's notes, fitted to the reading model's budget, newest run first (docs/decisions/0054).
 * A new run from CONFIG stores it and sends it as the second user message of its CONFIG request;
 * the context read route answers the same snapshot, built the same way.
 */
export class ExecutionContext {
  constructor(private readonly store: ExecutionContextStore) {}

  /**
   * `run`, the new run's number as it is being taken: run 1 has no earlier run (run numbers start
   * at 1), so its runs are not read; notes are (feedback given before any run is kept as run 0),
   * except with `approval`: an approval's run 1 reads none either. Only a retrigger writes a
   * note before an item's first run, and it takes its own run's number after writing it: that
   * run, numbered after the approval's and replacing it, tells the feedback.
   */
  async render(
    serviceItemId: number,
    run?: Promise<number>,
    target: ContextTarget = { modelId: null, declarationId: null },
    approval = false,
  ): Promise<string | null> {
    return (await this.snapshot(serviceItemId, target, run, approval)).text;
  }

  async snapshot(
    serviceItemId: number,
    target: ContextTarget,
    run?: Promise<number>,
    approval = false,
  ): Promise<ContextSnapshot> {
    const { store } = this;
    const notesRead = () => store.notes(serviceItemId, CONTEXT_READ_LIMITS.notes);
    const [runs, notes, modelName] = await Promise.all([
      (run ?? Promise.resolve(null)).then((number) =>
        number === 1 ? [] : store.recentRuns(serviceItemId, CONTEXT_READ_LIMITS.runs),
      ),
      approval && run ? run.then((number) => (number === 1 ? [] : notesRead())) : notesRead(),
      target.modelId === null ? null : store.modelName(target.modelId),
    ]);
    const budget = contextBudget(modelName);
    const base = { service_item_id: serviceItemId, model_id: target.modelId, model_name: modelName, budget };
    const entries = contextRuns(runs, notes, target.declarationId);
    if (entries.length === 0) return { ...base, text: null, runs: [], left_out: [] };
    const fitted = fitContext(contextHeader(serviceItemId), entries, budget.characters);
    return { ...base, text: fitted.text, runs: fitted.kept, left_out: fitted.left_out };
  }
}
