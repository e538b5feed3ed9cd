/**
 * The alert rules in deploy/prometheus/rules: valid for Prometheus (`promtool check rules`), and
 * each alert unit-tested (`promtool test rules`) firing on a series that should fire it and
 * silent on one that should not.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { promtool } from '@pack/testkit';
import { readYaml, REPO } from './load';

const RULES_DIR = 'deploy/prometheus/rules';
const TESTS_DIR = 'deploy/prometheus/tests';
const yamlIn = (dir: string) =>
  readdirSync(path.join(REPO, dir))
    .filter((name) => /\.ya?ml$/.test(name))
    .map((name) => path.join(dir, name));

interface RuleFile {
  groups: { name: string; rules: { alert?: string; record?: string; expr: string }[] }[];
}
interface RuleTestFile {
  rule_files: string[];
  tests: {
    name: string;
    input_series: { series: string }[];
    alert_rule_test?: { alertname: string; exp_alerts?: { exp_labels?: Record<string, string> }[] }[];
  }[];
}

const alerts = yamlIn(RULES_DIR).flatMap((file) =>
  (readYaml(file) as RuleFile[]).flatMap((doc) =>
    doc.groups.flatMap((group) => group.rules.flatMap((rule) => (rule.alert ? [rule.alert] : []))),
  ),
);
const ruleTests = yamlIn(TESTS_DIR).flatMap((file) =>
  (readYaml(file) as RuleTestFile[]).map((doc) => ({ file, doc })),
);

describe('alert rules (deploy/prometheus/rules)', () => {
  it('alert on what the platform must never hide', () => {
    expect(alerts).toEqual(
      expect.arrayContaining([
        'PackServiceNotReady',
        'PackBrokerUnreachable',
        'PackDeadLetters',
        'PackBreakerOpen',
        'PackStageFailureRate',
        'PackWebhookFailureRate',
        'PackLlmCostPerHourHigh',
        'PackServiceAiBudgetNearlySpent',
        'PackServiceAiBudgetSpent',
      ]),
    );
  });

  it('each alert is unit-tested firing, and silent on a series that should not fire it', () => {
    const firing = new Set<string>();
    const silent = new Set<string>();
    for (const { doc } of ruleTests) {
      for (const test of doc.tests) {
        for (const check of test.alert_rule_test ?? []) {
          const expected = check.exp_alerts ?? [];
          if (expected.length > 0) firing.add(check.alertname);
          // Silent: nothing expected, or input series beyond the ones the expected alerts name.
          if (expected.length === 0 || test.input_series.length > expected.length)
            silent.add(check.alertname);
        }
      }
    }
    expect(alerts.filter((alert) => !firing.has(alert))).toEqual([]);
    expect(alerts.filter((alert) => !silent.has(alert))).toEqual([]);
  });

  it('pass promtool check rules', () => {
    const files = yamlIn(RULES_DIR);
    expect(files.length).toBeGreaterThan(0);
    const result = promtool(['check', 'rules', ...files], undefined, REPO);
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
  });

  it('pass their unit tests (promtool test rules)', () => {
    const files = yamlIn(TESTS_DIR);
    expect(files.length).toBeGreaterThan(0);
    const result = promtool(['test', 'rules', ...files], undefined, REPO);
    expect({
      status: result.status,
      output: result.status === 0 ? '' : `${result.stdout}${result.stderr}`,
    }).toEqual({ status: 0, output: '' });
    expect(result.stdout).toContain('SUCCESS');
  });
});
