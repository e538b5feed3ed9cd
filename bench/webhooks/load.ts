import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The local target: answers 200 at once and resolves whoever waits for a message id. */
export class Receiver {
  readonly waiting = new Map<string, () => void>();
  private server?: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.end('ok');
        const id = String(req.headers['webhook-id'] ?? req.headers['x-bench-id'] ?? '');
        this.waiting.get(id)?.();
        this.waiting.delete(id);
      });
    });
    this.server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  expect(id: string): Promise<void> {
    return new Promise((resolve) => this.waiting.set(id, resolve));
  }

  stop(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise((resolve) => this.server!.close(() => resolve()));
  }
}

export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

/** Runs `count` jobs on `concurrency` closed-loop workers; returns per-job latencies and wall time. */
export async function closedLoop(
  count: number,
  concurrency: number,
  job: (n: number) => Promise<void>,
): Promise<{ ms: number[]; wall: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const n = next++;
        const t0 = performance.now();
        await job(n);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { ms: latencies.sort((a, b) => a - b), wall: performance.now() - started };
}

/** A service's /metrics text. */
export async function metricsOf(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

/** Database commands a service sent so far, by command name (db_commands_total). */
export async function commandsByName(url: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const m of (await metricsOf(url)).matchAll(/^db_commands_total\{command="(\w+)"[^}]*\} (\d+)/gm))
    counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + Number(m[2]));
  return counts;
}

/** Commands per delivery by name between two readings, and their sum. */
export function commandsPer(
  before: Map<string, number>,
  after: Map<string, number>,
  deliveries: number,
): { total: number; named: Map<string, number> } {
  const named = new Map<string, number>();
  let total = 0;
  for (const [name, n] of after) {
    const per = (n - (before.get(name) ?? 0)) / deliveries;
    if (per <= 0) continue;
    named.set(name, per);
    total += per;
  }
  return { total, named };
}
