/** What the demo prints: timed progress lines, and at the end where to look in the API and the metrics. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { describe } from './api';

const REPO = path.resolve(__dirname, '../..');
const started = Date.now();

export function say(line: string): void {
  const seconds = ((Date.now() - started) / 1000).toFixed(1).padStart(5);
  process.stdout.write(`[${seconds}s] ${line}\n`);
}

/** JSON on one line, cut to `max` characters. */
export function excerpt(value: unknown, max = 160): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

export interface Created {
  model: number;
  service: number;
  webhook: number;
  changeInstance: number;
  serviceItem: number;
  pipeline: number;
  /** The healing scene's Service Item. */
  healing: number;
}

export function whereToLook(gateway: string, ids: Created, trace: string[] = []): void {
  const base = gateway.replace(/\/$/, '');
  const lines = [
    '',
    'Where to look (every call with an admin token: -H "Authorization: Token $PACK_ADMIN_TOKEN",',
    'the token `pnpm start` keeps in .local/dev.env):',
    `  API reference           ${base}/v1/docs/  (OpenAPI document: ${base}/v1/openapi.json)`,
    `  the pipeline            GET ${base}/v1/external/serviceowner/pack/pipelines/${ids.pipeline}/`,
    `  rerun a stage           POST ${base}/v1/external/serviceowner/pack/trigger/service_item/${ids.serviceItem}/config/`,
    `  the Change Instance     GET ${base}/v1/catalog/change_instances/${ids.changeInstance}/`,
    `  what CONFIG is given    GET ${base}/v1/external/serviceowner/pack/pipelines/context/service_item/${ids.healing}/`,
    `  the webhook's responses GET ${base}/v1/external/serviceowner/webhooks/${ids.webhook}/responses/`,
    `  LLM cost and tokens     GET ${base}/v1/ai/dashboard/?group_by=model`,
    `  the model               GET ${base}/v1/ai/llm_models/${ids.model}/`,
    ...trace,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** The series the demo moved, by service: what a dashboard or an alert rule reads. */
const SERIES: Record<string, RegExp> = {
  'llm-gateway': /^llm_(requests|cost|input_tokens|output_tokens)_total\{/,
  'pipeline-orchestrator': /^pipeline_stage_transitions_total\{.*state="(OK|FAILED)"/,
  'webhook-dispatcher': /^webhook_deliveries_total\{/,
};

/** PACK_METRICS_URLS (`name=url,...`), else each service's METRICS_PORT of deploy/services.yaml. */
export function metricsTargets(env: NodeJS.ProcessEnv, gateway: string): Record<string, string> {
  if (env.PACK_METRICS_URLS) {
    return Object.fromEntries(
      env.PACK_METRICS_URLS.split(',').map((pair) => {
        const at = pair.indexOf('=');
        return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
      }),
    );
  }
  const file = path.join(REPO, 'deploy/services.yaml');
  if (!existsSync(file)) return {};
  const { services } = parse(readFileSync(file, 'utf8')) as {
    services: { name: string; metrics_port: number }[];
  };
  const host = new URL(gateway).hostname;
  return Object.fromEntries(services.map((s) => [s.name, `http://${host}:${s.metrics_port}`]));
}

export async function showMetrics(targets: Record<string, string>, modelId: number): Promise<void> {
  const lines = [
    '',
    "Metrics (Prometheus text on each service's internal METRICS_PORT; deploy/grafana/pack-platform.json",
    'charts them, deploy/prometheus/rules/pack-alerts.yml alerts on them):',
  ];
  for (const [service, pattern] of Object.entries(SERIES)) {
    const url = targets[service];
    if (!url) continue;
    lines.push(`  ${url}/metrics (${service})`);
    try {
      const response = await fetch(`${url.replace(/\/$/, '')}/metrics`, {
        signal: AbortSignal.timeout(5_000),
      });
      const samples = (await response.text())
        .split('\n')
        .filter((line) => pattern.test(line))
        .filter((line) => !line.startsWith('llm_') || line.includes(`model_id="${modelId}"`));
      lines.push(...(samples.length ? samples.map((line) => `    ${line}`) : ['    (no samples yet)']));
    } catch (error) {
      lines.push(`    (not reachable: ${describe(error)})`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
