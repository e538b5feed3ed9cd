export interface Row {
  side: 'pipeline' | 'baseline';
  concurrency: number;
  pipelines: number;
  stagesPerSecond: number;
  stageP50: number;
  stageP99: number;
  /** Stage time minus the provider's time at the same concurrency (p50 - p50, p99 - p99). */
  overheadP50: number;
  overheadP99: number;
  commandsPerStage: number;
  /** Medians, ms: previous end -> request on the broker, request -> result, result -> stage end; the provider. */
  breakdown: { toRequest: number; inGateway: number; toEnd: number; provider: number };
  errors: number;
  /** CPU time per stage of the llm-gateway and the orchestrator processes (pipeline side), ms. */
  cpuMsPerStage: number[];
}

const TARGETS = { overheadP50: 15, overheadP99: 50, commandsPerStage: 12 };
const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

/** The table, where a stage's time goes, then each target of the issue with the ratio to the baseline. */
export function report(rows: Row[], duration: number): string {
  const lines = [
    `bench/pipeline: instant fake OpenAI-shape provider, ${duration} s per measurement, ${new Date().toISOString()}`,
    'side      conc  pipelines  stages/s  stage p50  stage p99  overhead p50  overhead p99  db cmds/stage  errors',
  ];
  for (const r of rows)
    lines.push(
      [
        r.side.padEnd(9),
        String(r.concurrency).padStart(4),
        String(r.pipelines).padStart(10),
        fixed(r.stagesPerSecond).padStart(9),
        fixed(r.stageP50, 2).padStart(10),
        fixed(r.stageP99, 2).padStart(10),
        fixed(r.overheadP50, 2).padStart(13),
        fixed(r.overheadP99, 2).padStart(13),
        fixed(r.commandsPerStage, 2).padStart(14),
        String(r.errors).padStart(7),
      ].join(' '),
    );
  lines.push(
    'where a pipeline stage goes (medians, ms; BREAKDOWN=1): to the request on the broker / llm-gateway / to the stage end; provider',
  );
  for (const r of rows.filter((row) => row.side === 'pipeline')) {
    const b = r.breakdown;
    lines.push(
      `  concurrency ${r.concurrency}: ${fixed(b.toRequest, 2)} / ${fixed(b.inGateway, 2)} / ${fixed(b.toEnd, 2)}; ${fixed(b.provider, 2)}` +
        `; CPU ms per stage, llm-gateway / orchestrator: ${r.cpuMsPerStage.map((ms) => fixed(ms, 2)).join(' / ')}`,
    );
  }
  const find = (side: Row['side'], concurrency: number) =>
    rows.find((r) => r.side === side && r.concurrency === concurrency);
  const check = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const one = (find('pipeline', 1) ?? find('pipeline', 20))!;
  const worst = Math.max(...rows.filter((r) => r.side === 'pipeline').map((r) => r.commandsPerStage));
  lines.push(
    `overhead p50 at concurrency 1: ${fixed(one.overheadP50, 2)} ms (target <= ${TARGETS.overheadP50}): ${check(one.overheadP50 <= TARGETS.overheadP50)}`,
    `overhead p99 at concurrency 1: ${fixed(one.overheadP99, 2)} ms (target <= ${TARGETS.overheadP99}): ${check(one.overheadP99 <= TARGETS.overheadP99)}`,
    `database commands per stage: ${fixed(worst, 2)} at most (target <= ${TARGETS.commandsPerStage}): ${check(worst <= TARGETS.commandsPerStage)}`,
  );
  for (const concurrency of [...new Set(rows.map((r) => r.concurrency))]) {
    const pipeline = find('pipeline', concurrency)!;
    const baseline = find('baseline', concurrency)!;
    lines.push(
      `concurrency ${concurrency}: stages/s pipeline/baseline ${fixed(pipeline.stagesPerSecond / baseline.stagesPerSecond, 2)}, ` +
        `stage p50 pipeline/baseline ${fixed(pipeline.stageP50 / baseline.stageP50, 2)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
