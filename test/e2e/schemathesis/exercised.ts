import { readFileSync } from 'node:fs';

/** One operation's scenario as schemathesis's NDJSON report ends it. */
interface ScenarioFinished {
  phase: string;
  recorder: {
    label: string;
    interactions?: Record<string, { response: { status_code: number } | null }>;
  };
}

/**
 * The operations (`POST /v1/...`, as the document names them) that got an answer to at least one
 * generated request, by phase (coverage, fuzzing, ...), read from a run's `--report ndjson` file.
 * A case that was generated but never sent, or sent without an answer, does not count.
 */
export function exercisedOperations(ndjson: string): Map<string, Set<string>> {
  const byPhase = new Map<string, Set<string>>();
  for (const line of readFileSync(ndjson, 'utf8').split('\n')) {
    if (!line.startsWith('{"ScenarioFinished"')) continue;
    const { phase, recorder } = (JSON.parse(line) as { ScenarioFinished: ScenarioFinished }).ScenarioFinished;
    const answered = Object.values(recorder.interactions ?? {}).some((interaction) => interaction.response);
    if (!answered) continue;
    if (!byPhase.has(phase)) byPhase.set(phase, new Set());
    byPhase.get(phase)!.add(recorder.label);
  }
  return byPhase;
}
