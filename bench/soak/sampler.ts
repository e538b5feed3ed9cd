/**
 * What the soak samples while it runs: each service's resident memory (/proc), event-loop delay
 * p99 and open handles (its Prometheus metrics), and each request's latency by when it ended.
 */
import { readFileSync } from 'node:fs';
import { rssMb } from '../crash-scenario/runtime';
import { SERVICES, type Fleet, type ServiceName } from '../crash-scenario/fleet';

export interface Sample {
  at: number;
  rss: number | undefined;
  loopP99Ms: number | undefined;
  handles: number | undefined;
  /** V8 heap in use, MB (what a leak in JavaScript objects grows). */
  heapMb: number | undefined;
  /** glibc's brk heap resident, MB (what native allocations keep: freed memory not given back). */
  brkMb: number | undefined;
}

/** The resident size of the process's brk heap (the `[heap]` mapping of /proc/<pid>/smaps), MB. */
function brkMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8');
    const at = smaps.indexOf('[heap]');
    const rss = at < 0 ? undefined : /^Rss:\s+(\d+) kB$/m.exec(smaps.slice(at));
    return rss ? Number(rss[1]) / 1024 : 0;
  } catch {
    return undefined;
  }
}

/** The sum of a metric's series (nodejs_active_handles has one per handle type). */
const metric = (text: string, name: string): number | undefined => {
  const values = [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'gm'))];
  return values.length === 0 ? undefined : values.reduce((sum, m) => sum + Number(m[1]), 0);
};

export class Sampler {
  readonly samples = new Map<ServiceName, Sample[]>(SERVICES.map((name) => [name, []]));
  /** [ended at, milliseconds] of every timed request. */
  readonly latencies: [number, number][] = [];
  private timer?: NodeJS.Timeout;

  constructor(private readonly fleet: Fleet) {}

  async sampleOnce(): Promise<void> {
    await Promise.all(
      SERVICES.map(async (name) => {
        const text = await fetch(this.fleet.metricsUrl(name))
          .then((r) => r.text())
          .catch(() => '');
        const lag = metric(text, 'nodejs_eventloop_lag_p99_seconds');
        this.samples.get(name)!.push({
          at: Date.now(),
          rss: rssMb(this.fleet.pid(name)),
          loopP99Ms: lag === undefined ? undefined : lag * 1000,
          handles: metric(text, 'nodejs_active_handles'),
          heapMb: (metric(text, 'nodejs_heap_size_used_bytes') ?? NaN) / 2 ** 20 || undefined,
          brkMb: brkMb(this.fleet.pid(name)),
        });
      }),
    );
  }

  start(everyMs: number): void {
    void this.sampleOnce();
    this.timer = setInterval(() => void this.sampleOnce(), everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Times one request (its latency counts towards the p99 windows). */
  async timed<T>(request: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await request();
    } finally {
      this.latencies.push([Date.now(), performance.now() - started]);
    }
  }
}

export const p99 = (values: number[]): number | undefined => {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
};

/** Least-squares slope of RSS against time, in MB per hour, over the samples from `from` on. */
export function slopeMbPerHour(samples: Sample[], from: number): number | undefined {
  const points = samples.filter((s) => s.at >= from && s.rss !== undefined);
  if (points.length < 3) return undefined;
  const xs = points.map((s) => (s.at - from) / 3_600_000);
  const ys = points.map((s) => s.rss!);
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  const num = xs.reduce((sum, x, i) => sum + (x - mx) * (ys[i]! - my), 0);
  const den = xs.reduce((sum, x) => sum + (x - mx) ** 2, 0);
  return den === 0 ? undefined : num / den;
}
