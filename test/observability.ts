/** What the observability tests share: the deploy/ Prometheus configuration pointed at a test stack. */
import path from 'node:path';
import { stringify } from 'yaml';
import { readYaml, REPO } from './deploy/load';
import type { Stack } from './stack';

interface StaticConfig {
  targets: string[];
  labels?: Record<string, string>;
}
interface ScrapeJob {
  job_name: string;
  static_configs?: StaticConfig[];
  [key: string]: unknown;
}
interface PrometheusConfig {
  global?: Record<string, unknown>;
  rule_files?: string[];
  scrape_configs: ScrapeJob[];
}

/** The host:port of a URL (a Prometheus target). */
const hostPort = (url: string) => new URL(url).host;

/**
 * deploy/prometheus/prometheus.yml with every service target pointed at the stack's metrics
 * listener (matched by the target's `service` label), its alert rules by absolute path, and a
 * one-second scrape and evaluation interval. Jobs that scrape no platform service (Prometheus
 * itself) are left out. Throws when a target names no running service, or a running service
 * has no target: the configuration and the stack must agree.
 */
export function scrapeConfigForStack(stack: Stack): { yaml: string; targets: number } {
  const [config] = readYaml('deploy/prometheus/prometheus.yml') as PrometheusConfig[];
  const running = new Map(stack.services.map((service) => [service.definition.name, service.metricsUrl]));
  const unscraped = new Set(running.keys());
  const jobs: ScrapeJob[] = [];
  for (const job of config!.scrape_configs) {
    const statics = job.static_configs ?? [];
    if (!statics.some((entry) => entry.labels?.service)) continue;
    jobs.push({
      ...job,
      static_configs: statics.map((entry) => {
        const service = entry.labels?.service ?? '';
        const url = running.get(service);
        if (!url)
          throw new Error(`prometheus.yml scrapes ${service || entry.targets.join()}, which is not running`);
        unscraped.delete(service);
        return { ...entry, targets: [hostPort(url)] };
      }),
    });
  }
  if (unscraped.size > 0) throw new Error(`prometheus.yml has no target for: ${[...unscraped].join(', ')}`);
  const rules = (config!.rule_files ?? []).map((pattern) => path.join(REPO, 'deploy/prometheus', pattern));
  const adapted: PrometheusConfig = {
    global: { ...config!.global, scrape_interval: '1s', evaluation_interval: '1s' },
    rule_files: rules,
    scrape_configs: jobs,
  };
  return { yaml: stringify(adapted), targets: running.size };
}

/** Metric family names in a Prometheus text exposition (from its TYPE lines). */
export function metricFamilies(exposition: string): string[] {
  return [...exposition.matchAll(/^# TYPE (\S+) \S+$/gm)].map((match) => match[1]!);
}

const NOT_METRICS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'inf',
  'nan',
  'group_left',
  'group_right',
]);
const HISTOGRAM_SERIES = /_(bucket|sum|count)$/;

/**
 * The metric names a PromQL expression reads: identifiers that are not functions, keywords,
 * label names (in matchers or by/without/on/ignoring lists), strings or ranges.
 */
export function metricNames(expression: string): string[] {
  const bare = expression
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = [...bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)]
    .filter((match) => !/^\s*\(/.test(bare.slice(match.index + match[0].length)))
    .map((match) => match[0])
    .filter((name) => !NOT_METRICS.has(name.toLowerCase()));
  return [...new Set(names)];
}

/** Whether `name` is one of `families` (a histogram's _bucket/_sum/_count series counts as its family). */
export function isKnownMetric(name: string, families: ReadonlySet<string>): boolean {
  return families.has(name) || families.has(name.replace(HISTOGRAM_SERIES, ''));
}

interface DashboardPanel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: DashboardPanel[];
}
export interface Dashboard {
  panels: DashboardPanel[];
  templating?: { list: { name: string; query?: string | { query?: string } }[] };
}

/** Every PromQL expression of a Grafana dashboard: panel targets and query variables. */
export function dashboardExpressions(dashboard: Dashboard): { where: string; expr: string }[] {
  const fromPanels = (panels: DashboardPanel[]): { where: string; expr: string }[] =>
    panels.flatMap((panel) => [
      ...(panel.targets ?? []).flatMap((t) =>
        t.expr ? [{ where: `panel "${panel.title}"`, expr: t.expr }] : [],
      ),
      ...fromPanels(panel.panels ?? []),
    ]);
  const variables = (dashboard.templating?.list ?? []).flatMap((variable) => {
    const query = typeof variable.query === 'string' ? variable.query : variable.query?.query;
    const inner = query && /^label_values\((.+),\s*\w+\)$/.exec(query)?.[1];
    return inner ? [{ where: `variable ${variable.name}`, expr: inner }] : [];
  });
  return [...fromPanels(dashboard.panels), ...variables];
}

/** A dashboard expression as Prometheus can run it: Grafana's range and variables replaced. */
export function runnable(expression: string): string {
  return expression.replace(/\$__range/g, '1h').replace(/\$\{?\w+\}?/g, 'x');
}
