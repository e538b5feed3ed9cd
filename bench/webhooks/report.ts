import { formatCpu, median, medianOf } from './figures';

/** One measured round of one side (a dispatcher or the baseline). */
export interface Measurement {
  side: string;
  round: number;
  perSecond: number;
  p50: number;
  p99: number;
  commands: { total: number; named: Map<string, number> };
  /** CPU ms per delivery by process name. */
  cpu: Map<string, number>;
  /** The side's RSS after its round, MB (a dispatcher's). */
  rss?: number;
  /** deliveries/s over the baseline's of the same round. */
  ratio?: number;
}

const TARGETS = { perSecond: 700, p99: 60, rss: 120 };
export const CPU_ORDER = ['dispatcher', 'FerretDB', 'PostgreSQL', 'RabbitMQ', 'bench'];
const f = (n: number | undefined, digits = 1) =>
  n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(digits);

function line(m: Measurement): string {
  return [
    String(m.round).padEnd(5),
    m.side.padEnd(12),
    f(m.perSecond, 0).padStart(12),
    f(m.p50).padStart(6),
    f(m.p99).padStart(6),
    f(m.ratio, 2).padStart(6),
    f(m.rss, 0).padStart(6),
    f(m.commands.total, 2).padStart(8),
    `  ${formatCpu(m.cpu, CPU_ORDER)}`,
  ].join(' ');
}

const named = (commands: Map<string, number>) =>
  [...commands]
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${name} ${n.toFixed(3)}`)
    .join(', ');

/** Every round, then each side's medians, its commands by name and the targets. */
export function report(measurements: Measurement[], header: string): string {
  const lines = [
    header,
    'round side         deliveries/s p50 ms p99 ms  ratio RSS MB cmds/dl  CPU ms per delivery by process',
    ...measurements.map(line),
    'medians:',
  ];
  const sides = [...new Set(measurements.map((m) => m.side))];
  for (const side of sides) {
    const of = measurements.filter((m) => m.side === side);
    const pick = (get: (m: Measurement) => number | undefined) => {
      const values = of.map(get).filter((v): v is number => v !== undefined);
      return values.length ? median(values) : undefined;
    };
    lines.push(
      line({
        side,
        round: NaN,
        perSecond: pick((m) => m.perSecond)!,
        p50: pick((m) => m.p50)!,
        p99: pick((m) => m.p99)!,
        ratio: pick((m) => m.ratio),
        rss: pick((m) => m.rss),
        commands: { total: pick((m) => m.commands.total)!, named: new Map() },
        cpu: medianOf(of.map((m) => m.cpu)),
      }).replace(/^NaN  /, 'all  '),
    );
  }
  lines.push('database commands per delivery by name (medians):');
  for (const side of sides)
    lines.push(
      `  ${side}: ${named(medianOf(measurements.filter((m) => m.side === side).map((m) => m.commands.named)))}`,
    );
  const current = measurements.filter((m) => m.side === 'dispatcher');
  if (current.length) {
    const perSecond = median(current.map((m) => m.perSecond));
    const p99 = median(current.map((m) => m.p99));
    const rss = Math.max(...current.map((m) => m.rss ?? 0));
    const check = (ok: boolean) => (ok ? 'met' : 'NOT met');
    lines.push(
      `targets (dispatcher, medians): deliveries/s ${f(perSecond, 0)} >= ${TARGETS.perSecond}: ${check(perSecond >= TARGETS.perSecond)}; ` +
        `p99 ${f(p99)} ms <= ${TARGETS.p99}: ${check(p99 <= TARGETS.p99)}; RSS ${f(rss, 0)} MB <= ${TARGETS.rss}: ${check(rss <= TARGETS.rss)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
