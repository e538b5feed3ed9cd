import type { Figures } from './measure';

export interface Side {
  name: 'gateway' | 'baseline' | 'litellm';
  concurrency: number;
  figures: Figures;
  /** The fake provider called directly at the same concurrency. */
  provider: Figures;
  /** All database commands per call, background ones (readiness pings, cache refreshes) included. */
  commands: number;
  /** The per-call writes alone. */
  writes: number;
  /** CPU time the side's own process spent per call (the baseline shares the bench process: n/a). */
  cpuMsPerCall: number;
  rss: number;
}

/** The figures for LiteLLM 1.106 on this kind of machine, used when it could not run. */
const REFERENCE_LITELLM = { addedP50c1: 22, callsPerSecondC10: 47.5 };

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');

/** The table, then each target of the issue with the measured ratio. */
export function report(sides: Side[], notes: { duration: number; litellm: string }): string {
  const lines = [
    `bench/llm-gateway: instant fake OpenAI-shape provider, ${notes.duration} s per measurement, ${new Date().toISOString()}`,
    notes.litellm,
    'side      conc   calls/s    p50 ms    p99 ms  added p50  added p99  db cmds/call  cpu ms/call  RSS MB  errors',
  ];
  for (const s of sides) {
    const f = s.figures;
    lines.push(
      [
        s.name.padEnd(9),
        String(s.concurrency).padStart(4),
        fixed(f.callsPerSecond).padStart(9),
        fixed(f.p50, 2).padStart(9),
        fixed(f.p99, 2).padStart(9),
        fixed(f.p50 - s.provider.p50, 2).padStart(10),
        fixed(f.p99 - s.provider.p99, 2).padStart(10),
        fixed(s.commands, 2).padStart(13),
        fixed(s.cpuMsPerCall, 2).padStart(12),
        fixed(s.rss).padStart(7),
        String(f.errors).padStart(7),
      ].join(' '),
    );
  }
  const find = (name: Side['name'], concurrency: number) =>
    sides.find((s) => s.name === name && s.concurrency === concurrency);
  const gateway1 = find('gateway', 1);
  const gateway10 = find('gateway', 10);
  const baseline10 = find('baseline', 10);
  const litellm1 = find('litellm', 1);
  const litellm10 = find('litellm', 10);
  const added = (s: Side | undefined) => (s ? s.figures.p50 - s.provider.p50 : NaN);
  const litellmRps = litellm10?.figures.callsPerSecond ?? REFERENCE_LITELLM.callsPerSecondC10;
  const litellmAdded = litellm1 ? added(litellm1) : REFERENCE_LITELLM.addedP50c1;
  const source = litellm10 ? 'measured' : "the issue's reference figures";
  const check = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const rpsRatio = (gateway10?.figures.callsPerSecond ?? NaN) / litellmRps;
  const addedRatio = added(gateway1) / litellmAdded;
  const baselineRatio =
    (gateway10?.figures.callsPerSecond ?? NaN) / (baseline10?.figures.callsPerSecond ?? NaN);
  const commands = Math.max(gateway1?.commands ?? NaN, gateway10?.commands ?? NaN);
  const writes = Math.max(gateway1?.writes ?? NaN, gateway10?.writes ?? NaN);
  const rss = Math.max(gateway1?.rss ?? NaN, gateway10?.rss ?? NaN);
  lines.push(
    `targets (LiteLLM: ${source})`,
    `  calls/s at 10 vs LiteLLM      ${fixed(rpsRatio, 2)}x  (>= 5x)    ${check(rpsRatio >= 5)}`,
    `  added p50 at 1 vs LiteLLM     ${fixed(addedRatio, 3)}x (<= 0.5x)  ${check(addedRatio <= 0.5)}`,
    `  calls/s at 10 vs baseline     ${fixed(baselineRatio, 2)}x  (>= 0.5x)  ${check(baselineRatio >= 0.5)}`,
    `  database commands per call    ${fixed(writes, 2)}   (<= 3)     ${check(writes <= 3)}  (${fixed(commands, 2)} with background commands)`,
    `  gateway RSS                   ${fixed(rss)} MB (<= 120)  ${check(rss <= 120)}`,
    '',
  );
  return lines.join('\n');
}
