/**
 * Prometheus for real: every service's /metrics passes `promtool check metrics`; the real
 * `prometheus` binary, run with deploy/prometheus/prometheus.yml pointed at this stack, finds
 * every service up, loads the alert rules, shows a request, a pipeline stage and a webhook
 * delivery made here in queried series and runs every dashboard query; and the dashboard and the
 * alert rules name only metrics the services expose.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PrometheusServer, promtool, waitFor } from '@pack/testkit';
import { builtServices, readYaml, REPO } from '../deploy/load';
import {
  dashboardExpressions,
  isKnownMetric,
  metricFamilies,
  metricNames,
  runnable,
  scrapeConfigForStack,
  type Dashboard,
} from '../observability';
import { startStack, type Stack } from '../stack';
import { oneStageAndOneDelivery } from './stage-and-delivery';

const DASHBOARD = 'deploy/grafana/pack-platform.json';
const dashboard = JSON.parse(readFileSync(path.join(REPO, DASHBOARD), 'utf8')) as Dashboard;
const ruleExpressions = (
  readYaml('deploy/prometheus/rules/pack-alerts.yml') as {
    groups: { rules: { alert?: string; expr: string }[] }[];
  }[]
).flatMap((file) =>
  file.groups.flatMap((group) =>
    group.rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr })),
  ),
);

/** Labels that would give a series per user, token or raw URL (unbounded cardinality). */
const FORBIDDEN_LABELS = /^(user|user_?id|username|token|path|url|request_?id|ip)$/;
/** A route label with an id in it is a raw path, not a template. */
const RAW_ROUTE = /route="[^"]*\/\d+(\/|")/;

let stack: Stack;
const scrape = (name: string) =>
  fetch(`${stack.service(name).metricsUrl}/metrics`).then(async (response) => {
    expect(response.status).toBe(200);
    return response.text();
  });

beforeAll(async () => {
  stack = await startStack();
  // Traffic through every kind of route, so the labelled series exist.
  await stack.call('GET', '/v1/core/general_settings/');
  await stack.call('GET', '/v1/catalog/services/');
  await stack.call('GET', '/v1/ai/llm_models/');
  await stack.call('GET', '/v1/core/tokens/');
});
afterAll(async () => {
  await stack?.stop();
});

describe('the metrics the stack exposes', () => {
  it('come from every service of deploy/services.yaml that exists', () => {
    expect(stack.services.map((service) => service.definition.name).sort()).toEqual(
      builtServices()
        .map((entry) => entry.name)
        .sort(),
    );
  });

  it(`are the only ones ${DASHBOARD} and the alert rules query`, async () => {
    const families = new Set(['up']);
    for (const service of stack.services)
      for (const family of metricFamilies(await scrape(service.definition.name))) families.add(family);
    const expressions = [...dashboardExpressions(dashboard), ...ruleExpressions];
    expect(dashboardExpressions(dashboard).length).toBeGreaterThan(15);
    const unknown = expressions.flatMap(({ where, expr }) =>
      metricNames(expr)
        .filter((name) => !isKnownMetric(name, families))
        .map((name) => `${where}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });
});

describe('the stack under Prometheus', () => {
  it.each(builtServices().map((entry) => entry.name))(
    "%s's /metrics passes promtool check metrics, without per-user or raw-path labels",
    async (name) => {
      const text = await scrape(name);
      const checked = promtool(['check', 'metrics'], text);
      expect({ status: checked.status, problems: `${checked.stdout}${checked.stderr}`.trim() }).toEqual({
        status: 0,
        problems: '',
      });
      const series = text.split('\n').filter((line) => line && !line.startsWith('#'));
      const labelNames = new Set(
        series.flatMap((line) => [...line.matchAll(/[{,](\w+)="/g)].map((m) => m[1]!)),
      );
      expect([...labelNames].filter((label) => FORBIDDEN_LABELS.test(label))).toEqual([]);
      expect(series.filter((line) => RAW_ROUTE.test(line))).toEqual([]);
    },
  );

  it('is scraped by the real prometheus: every target up, rules loaded, a request, a stage and a delivery visible', async () => {
    const { yaml, targets } = scrapeConfigForStack(stack);
    const prometheus = await PrometheusServer.start(yaml);
    try {
      const up = await waitFor(
        async () => {
          const active = await prometheus.activeTargets();
          return active.length === targets && active.every((t) => t.health === 'up') && active;
        },
        { intervalMs: 250, what: 'every target to be up' },
      );
      expect(up.map((target) => target.labels.service).sort()).toEqual(
        stack.services.map((service) => service.definition.name).sort(),
      );
      const upSeries = await prometheus.query('up == 1');
      expect(upSeries).toHaveLength(targets);

      // Three reads of the settings through the gateway: the gateway's series for that route counts them.
      for (let i = 0; i < 3; i += 1)
        expect((await stack.call('GET', '/v1/core/general_settings/')).status).toBe(200);
      const expression =
        'sum(http_request_duration_seconds_count{service="gateway",route="proxy:settings",status_code="200"})';
      const seen = await waitFor(
        async () => {
          const [sample] = await prometheus.query(expression);
          return sample && Number(sample.value[1]) === 4 && sample; // one in beforeAll, three here
        },
        { intervalMs: 250, what: `${expression} to reach 4` },
      );
      expect(Number(seen.value[1])).toBe(4);

      // One declaration to an auto-approving Service: its CONFIG stage runs and its webhook delivers.
      await oneStageAndOneDelivery(stack);
      const counted = async (expression: string, expected: number) => {
        const sample = await waitFor(
          async () => {
            const [found] = await prometheus.query(expression);
            return found && Number(found.value[1]) === expected && found;
          },
          { intervalMs: 250, what: `${expression} to reach ${expected}` },
        );
        expect(Number(sample.value[1])).toBe(expected);
      };
      await counted('sum(pipeline_stage_transitions_total{stage="CONFIG",state="OK"})', 1);
      await counted('sum(webhook_deliveries_total{outcome="ok"})', 1);
      await counted('sum(webhook_attempts_total)', 1);

      const groups = await waitFor(
        async () => {
          const loaded = await prometheus.ruleGroups();
          const rules = loaded.flatMap((group) => group.rules);
          return rules.length > 0 && rules.every((rule) => rule.health === 'ok') && loaded;
        },
        { intervalMs: 250, what: 'the alert rules to be evaluated' },
      );
      expect(groups.length).toBeGreaterThan(0);
      // A healthy stack wakes nobody: nothing fires.
      expect((await prometheus.alerts()).filter((alert) => alert.state === 'firing')).toEqual([]);

      // Every dashboard query parses and runs (Grafana's variables replaced).
      const failed: string[] = [];
      for (const { where, expr } of dashboardExpressions(dashboard))
        await prometheus
          .query(runnable(expr))
          .catch((error: Error) => failed.push(`${where}: ${error.message}`));
      expect(failed).toEqual([]);
    } finally {
      await prometheus.stop();
    }
  });
});
