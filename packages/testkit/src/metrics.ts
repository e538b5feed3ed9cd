import { isDeepStrictEqual } from 'node:util';
import { waitFor } from './waiting';

/** The value of a service's Prometheus metric (the first series of that name; 0 while it has none). */
export async function metricValue(baseUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+(?:\\.\\d+)?)$`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

/**
 * The value of the series of `name` carrying `labels` (among others, e.g. the service label) in
 * a Prometheus text page, 0 when there is none yet. Read before and after what a test does, the
 * difference is what it added, whatever earlier tests counted.
 */
export function metricSample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const present = (match[2] ?? '').split(',');
    if (wanted.every((pair) => present.includes(pair))) return Number(match[3]);
  }
  return 0;
}

/** A service's /metrics page as text. */
export async function metricsText(baseUrl: string): Promise<string> {
  return (await fetch(`${baseUrl}/metrics`)).text();
}

/** What a service's metrics added since `before`: `added(name, labels)` is the difference of that series. */
export type MetricsAdded = (name: string, labels?: Record<string, string>) => number;

/**
 * Reads what a service's metrics added since `before` (a /metrics page read earlier) until
 * `read(added)` equals `expected` (or the wait's ceiling passes), and returns the last reading for
 * the test to assert. A service raises a counter once its write has come back, and a reader can
 * see the write a moment before that, so the first reading after the write may still be short.
 */
export async function metricsAddedSince<T>(
  baseUrl: string,
  before: string,
  read: (added: MetricsAdded) => T,
  expected: T,
): Promise<T> {
  let reading: T | undefined;
  const take = async () => {
    const after = await metricsText(baseUrl);
    reading = read(
      (name, labels = {}) => metricSample(after, name, labels) - metricSample(before, name, labels),
    );
    return isDeepStrictEqual(reading, expected);
  };
  // Past the ceiling the last reading is the answer: the test's assertion shows how it differs.
  await waitFor(take, { what: 'the metrics to add what was expected' }).catch(() => undefined);
  return reading ?? read(() => 0);
}
