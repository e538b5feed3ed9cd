/** The soak's figures, printed per service, and whether each target held. */
import { SERVICES } from '../crash-scenario/fleet';
import { p99, slopeMbPerHour, type Sampler } from './sampler';
import type { CollectionSize } from './state';

export interface SoakRun {
  sampler: Sampler;
  startedAt: number;
  warmedAt: number;
  endedAt: number;
  /** Length of the windows whose p99 latency is compared (the first and the last). */
  windowMs: number;
}

/** What the soak read from the database and the broker (undefined: it did not answer in time). */
export interface SoakStorage {
  operations: { total: number; afterWarmUp: number };
  collections: { warm?: Map<string, CollectionSize>; end?: Map<string, CollectionSize> };
  queues: { warm: Map<string, number>; end: Map<string, number> };
}

const SLOPE_TARGET = 5;
const DRIFT_TARGET = 20;
const fmt = (value: number | undefined, digits = 1) => (value === undefined ? '-' : value.toFixed(digits));
const pad = (text: string, width: number) => text.padStart(width);

/** Prints each service's figures and the API's p99 drift; returns the targets missed. */
export function reportServices(run: SoakRun, print: (line: string) => void): string[] {
  const missed: string[] = [];
  print(`per service (RSS MB; slope after warm-up, target < ${SLOPE_TARGET} MB/h):`);
  print(
    '  service                 start   warm    end    max  MB/h  heap-warm/end  brk-warm/end  loop-p99-ms  handles',
  );
  for (const name of SERVICES) {
    const samples = run.sampler.samples.get(name)!;
    const rss = samples.filter((s) => s.rss !== undefined);
    const warm = rss.find((s) => s.at >= run.warmedAt);
    const slope = slopeMbPerHour(samples, run.warmedAt);
    const loop = samples.filter((s) => s.at >= run.warmedAt).map((s) => s.loopP99Ms ?? 0);
    const handles = samples.filter((s) => s.handles !== undefined);
    const heap = samples.filter((s) => s.heapMb !== undefined);
    const heapWarm = heap.find((s) => s.at >= run.warmedAt)?.heapMb;
    const brk = samples.filter((s) => s.brkMb !== undefined);
    const brkWarm = brk.find((s) => s.at >= run.warmedAt)?.brkMb;
    print(
      `  ${name.padEnd(22)}${pad(fmt(rss[0]?.rss), 6)}${pad(fmt(warm?.rss), 7)}${pad(fmt(rss.at(-1)?.rss), 7)}` +
        `${pad(fmt(Math.max(...rss.map((s) => s.rss!))), 7)}${pad(fmt(slope), 6)}` +
        `${pad(`${fmt(heapWarm)}/${fmt(heap.at(-1)?.heapMb)}`, 15)}` +
        `${pad(`${fmt(brkWarm)}/${fmt(brk.at(-1)?.brkMb)}`, 14)}${pad(fmt(p99(loop)), 13)}` +
        `${pad(`${handles[0]?.handles ?? '-'} -> ${handles.at(-1)?.handles ?? '-'}`, 10)}`,
    );
    if (slope !== undefined && slope >= SLOPE_TARGET) missed.push(`${name}: RSS slope ${fmt(slope)} MB/h`);
    if (rss.some((s) => s.rss! > 120)) missed.push(`${name}: RSS above 120 MB`);
  }
  const window = (from: number, to: number) =>
    run.sampler.latencies.filter(([at]) => at >= from && at < to).map(([, ms]) => ms);
  const first = window(run.startedAt, run.startedAt + run.windowMs);
  const last = window(run.endedAt - run.windowMs, run.endedAt + 1);
  const [p1, p2] = [p99(first), p99(last)];
  const drift = p1 && p2 ? ((p2 - p1) / p1) * 100 : undefined;
  print(
    `API p99 (every request through the gateway): first ${Math.round(run.windowMs / 1000)} s ${fmt(p1, 0)} ms ` +
      `(${first.length} requests), last ${fmt(p2, 0)} ms (${last.length}): drift ${fmt(drift, 0)} % (target < ${DRIFT_TARGET} %)`,
  );
  if (drift !== undefined && drift >= DRIFT_TARGET) missed.push(`p99 drift ${fmt(drift, 0)} %`);
  return missed;
}

/** Prints collections per 1,000 operations and queue depths; returns the targets missed. */
export function reportStorage(run: SoakStorage, print: (line: string) => void): string[] {
  const missed: string[] = [];
  const ops = run.operations;
  if (!run.collections.end) print('collections: the database did not answer in time');
  print(
    `collections (${ops.total} operations, ${ops.afterWarmUp} after warm-up): documents and KB at the end, ` +
      'per 1,000 operations, and growth after warm-up per 1,000 operations:',
  );
  for (const [name, end] of [...(run.collections.end ?? [])].sort()) {
    const warm = run.collections.warm?.get(name) ?? { documents: 0, bytes: 0 };
    const per = (n: number, of: number) => (of === 0 ? '-' : ((n * 1000) / of).toFixed(1));
    print(
      `  ${name.padEnd(46)}${pad(String(end.documents), 7)} docs${pad(fmt(end.bytes / 1024, 0), 8)} KB` +
        `${pad(per(end.documents, ops.total), 8)} docs/1k${pad(per(end.bytes / 1024, ops.total), 8)} KB/1k` +
        `${pad(per(end.documents - warm.documents, ops.afterWarmUp), 8)} docs/1k after warm-up`,
    );
  }
  print('queues (messages at warm-up -> at the end):');
  for (const [name, depth] of [...run.queues.end].sort())
    print(
      `  ${name.padEnd(60)}${pad(String(run.queues.warm.get(name) ?? '-'), 6)} ->${pad(String(depth), 6)}`,
    );
  for (const [name, depth] of run.queues.end)
    if (depth > Math.max(10, 2 * (run.queues.warm.get(name) ?? 0)))
      missed.push(`queue ${name} grew to ${depth}`);
  return missed;
}
