import { readdirSync, readFileSync } from 'node:fs';
import { cpuMs } from '../llm-gateway/measure';
import type { StageTiming } from './driver';
import type { BenchService } from './services';

/** The bench's optional figures: where the CPU goes, idle costs, per-stage medians (`pnpm bench:pipeline`). */

/**
 * Which processes' CPU is the database's: by default every FerretDB and PostgreSQL process on the
 * machine (shared with whatever else runs); with `PRIVATE_FERRET=1` the bench's own FerretDB
 * process and the PostgreSQL backends serving its database, so other work on the shared servers
 * is not counted (RabbitMQ stays the shared one).
 */
export interface DatabaseProcesses {
  /** The pids of the bench's FerretDB and of the PostgreSQL backends of its database, now. */
  pids(): Set<number>;
}

/** A private FerretDB's processes: its own (found by its port) and its database's PostgreSQL backends. */
export function privateDatabaseProcesses(
  url: string,
  sql: (statements: string) => string,
): DatabaseProcesses {
  const port = new URL(url).port;
  return {
    pids() {
      const pids = new Set<number>();
      for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
        try {
          const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
          if (args.includes(`-listen-addr=127.0.0.1:${port}`)) pids.add(Number(pid));
        } catch {
          continue;
        }
      }
      const rows = sql('SELECT pid FROM pg_stat_activity WHERE datname = current_database();');
      for (const row of rows.split('\n')) if (/^\s*\d+\s*$/.test(row)) pids.add(Number(row));
      return pids;
    },
  };
}

/** CPU ms used so far by each process of the local servers (FerretDB, PostgreSQL, RabbitMQ), by pid. */
export function infraCpuMs(database?: DatabaseProcesses): Map<number, { name: string; ms: number }> {
  const own = database?.pids();
  const names: Record<string, string> = {
    ferretdb: 'FerretDB',
    postgres: 'PostgreSQL',
    'beam.smp': 'RabbitMQ',
  };
  const used = new Map<number, { name: string; ms: number }>();
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    let comm: string;
    try {
      comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    const name = names[comm];
    if (!name || (own && name !== 'RabbitMQ' && !own.has(Number(pid)))) continue;
    used.set(Number(pid), { name, ms: cpuMs(Number(pid)) });
  }
  return used;
}

/**
 * Per server, the CPU ms its processes used between two readings, per stage: the processes seen
 * at both (a PostgreSQL backend that ended between them is left out, one started counts from 0).
 */
export function infraPerStage(
  before: Map<number, { name: string; ms: number }>,
  after: Map<number, { name: string; ms: number }>,
  stages: number,
): string {
  const used = new Map<string, number>();
  for (const [pid, { name, ms }] of after) {
    const spent = ms - (before.get(pid)?.ms ?? 0);
    if (Number.isFinite(spent)) used.set(name, (used.get(name) ?? 0) + spent);
  }
  return [...used].map(([name, ms]) => `${name} ${(ms / stages).toFixed(2)}`).join(', ');
}

/** A service's database commands so far, by command name (`SHOW_COMMANDS=1`). */
export async function commandsByName(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^db_commands_total\{command="(\w+)"[^}]*\} (\d+)/gm))
    counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + Number(m[2]));
  return counts;
}

/** Each service's CPU and database commands per second over `seconds` of doing nothing. */
export async function idleFigures(services: BenchService[], seconds: number): Promise<string> {
  const cpu0 = services.map((service) => cpuMs(service.process.pid));
  const commands0 = await Promise.all(services.map((service) => commandsByName(service.url)));
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const commands1 = await Promise.all(services.map((service) => commandsByName(service.url)));
  return services
    .map((service, i) => {
      const cpu = (cpuMs(service.process.pid) - cpu0[i]!) / seconds;
      const named = [...commands1[i]!]
        .map(([name, n]) => [name, (n - (commands0[i]!.get(name) ?? 0)) / seconds] as const)
        .filter(([, perSecond]) => perSecond > 0)
        .map(([name, perSecond]) => `${name} ${perSecond.toFixed(1)}`);
      return `idle ${service.name}: CPU ${cpu.toFixed(1)} ms/s, database commands/s: ${named.join(', ')}\n`;
    })
    .join('');
}

/** Median stage time and its three parts, per stage (`SHOW_STAGES=1`). */
export function stageMedians(concurrency: number, timings: StageTiming[]): string {
  return ['CONFIG', 'VERIFY', 'EXECUTION']
    .map((kind) => {
      const of = timings.filter((t) => t.stage === kind);
      const median = (pick: (t: StageTiming) => number | undefined) => {
        const values = of
          .map(pick)
          .filter((v): v is number => v !== undefined)
          .sort((a, b) => a - b);
        return (values[Math.floor(values.length / 2)] ?? NaN).toFixed(2);
      };
      return (
        `at ${concurrency} ${kind}: total ${median((t) => t.total)}, toRequest ${median((t) => t.toRequest)}, ` +
        `inGateway ${median((t) => t.inGateway)}, toEnd ${median((t) => t.toEnd)}\n`
      );
    })
    .join('');
}
