/**
 * Where a delivery's CPU goes: each process's CPU time (/proc) between two readings, per
 * delivery. On 2 shared cores every process's CPU is time the deliveries wait for, so the
 * dispatcher, the local servers (FerretDB, PostgreSQL, RabbitMQ) and this process (the producers
 * and the receiver) are all counted.
 */
import { cpuMs } from '../llm-gateway/measure';
import { infraCpuMs } from '../pipeline/figures';

export interface CpuReading {
  /** CPU ms so far by pid, with the name the figures are summed under. */
  pids: Map<number, { name: string; ms: number }>;
  at: number;
}

/** A reading of the named processes, the local servers and this process ("bench"). */
export function readCpu(named: { name: string; pid: number | undefined }[]): CpuReading {
  const pids = infraCpuMs();
  for (const { name, pid } of named) if (pid !== undefined) pids.set(pid, { name, ms: cpuMs(pid) });
  const self = process.cpuUsage();
  pids.set(process.pid, { name: 'bench', ms: (self.user + self.system) / 1000 });
  return { pids, at: performance.now() };
}

/**
 * CPU ms per unit by name between two readings: the processes seen at both (a PostgreSQL backend
 * that ended between them is left out, one started counts from 0).
 */
export function cpuBetween(before: CpuReading, after: CpuReading, units: number): Map<string, number> {
  const used = new Map<string, number>();
  for (const [pid, { name, ms }] of after.pids) {
    const spent = ms - (before.pids.get(pid)?.ms ?? 0);
    if (Number.isFinite(spent)) used.set(name, (used.get(name) ?? 0) + spent / units);
  }
  return used;
}

/** "name 1.23, ..., total 4.56" in a fixed order (names first, then the rest). */
export function formatCpu(used: Map<string, number>, order: string[], digits = 2): string {
  const names = [
    ...order.filter((name) => used.has(name)),
    ...[...used.keys()].filter((n) => !order.includes(n)),
  ];
  const total = names.reduce((sum, name) => sum + used.get(name)!, 0);
  return [
    ...names.map((name) => `${name} ${used.get(name)!.toFixed(digits)}`),
    `total ${total.toFixed(digits)}`,
  ].join(', ');
}

/** The median of each name's values. */
export function medianOf(values: Map<string, number>[]): Map<string, number> {
  const names = new Set(values.flatMap((v) => [...v.keys()]));
  return new Map([...names].map((name) => [name, median(values.map((v) => v.get(name) ?? 0))] as const));
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
