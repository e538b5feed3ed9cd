/**
 * bench/llm-gateway: what the LLM gateway adds to a generation, against the minimal same work and
 * against the LiteLLM proxy, all in one run, all calling one instant fake provider (OpenAI shape).
 *
 *   gateway:  a generate request published to RabbitMQ (with a confirm) until its result arrives;
 *             the gateway runs as its own process, as in production
 *   baseline: the provider call plus one insert of a call record, in this process
 *   litellm:  POST /v1/chat/completions on the LiteLLM proxy (installed under .local/)
 *   provider: the fake provider called directly: what each of the above spends in the provider
 *
 * At concurrency 1 and 10: calls/s, latency p50/p99, added latency (the side's p50/p99 minus the
 * provider's at the same concurrency), database commands per call and RSS, and the targets.
 *
 *   pnpm bench:llm-gateway     (DURATION=seconds per measurement, default 8; LITELLM=0 skips it; DASHBOARD=0 the dashboard;
 *                               GATEWAY_NODE_ARGS="--cpu-prof ..." passes node flags to the gateway;
 *                               FALLBACK=1 adds calls answered by their first fallback after a 500;
 *                               LLM_GATEWAY_FROM=DIR runs DIR's compiled llm-gateway, e.g. a checkout of
 *                               another revision, to compare in alternated runs)
 *   pnpm bench:llm-gateway --profile   also profiles the llm-gateway (node --cpu-prof) and prints
 *                               the functions with the most self time
 *
 * Each measurement also prints the CPU ms per call of every process (the llm-gateway, this
 * process, FerretDB, PostgreSQL, RabbitMQ) and the llm-gateway's database commands per call by name.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import mongoose from 'mongoose';
import { principalHeaders } from '@pack/http-kit';
import {
  deleteQueues,
  dropDatabase,
  FakeSettings,
  resolveInfra,
  startFakeOpenAi,
  waitFor,
} from '@pack/testkit';
import { GatewayDriver } from './gateway-driver';
import { startLiteLlm, LITELLM_VERSION, type LiteLlm } from './litellm';
import { chatCaller, cpuMs, dbCommands, drive, rssMb, type Figures } from './measure';
import { report, type Side } from './report';
import { dashboardOver100kCalls } from './dashboard-load';
import { fallbackFigures, fallbackReport } from './fallback-load';
import { commandsByName } from '../pipeline/figures';
import { CpuShares, sharesLine, topSelfTime } from './processes';
import {
  PRODUCTION_NODE_FLAGS,
  prepareRuntime,
  runtimeEnv,
  runtimeFromEnv,
  serviceCommand,
} from '../crash-scenario/runtime';

const root = path.resolve(__dirname, '../..');
const duration = Number(process.env.DURATION ?? 8);
const KEY = 'sk-bench-0123456789';
const CONCURRENCY = [1, 10] as const;
const RUNTIME = runtimeFromEnv();
/** More node flags (GATEWAY_NODE_ARGS); the compiled runtime adds the production ones itself. */
const PROFILE_DIR = process.argv.includes('--profile')
  ? mkdtempSync(path.join(tmpdir(), 'llm-gw-prof-'))
  : undefined;
const GATEWAY_NODE_FLAGS = [
  ...(RUNTIME === 'source' ? ['--max-semi-space-size=2', '--optimize-for-size'] : []),
  ...(process.env.GATEWAY_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
  ...(PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []),
];
/** Another checkout's compiled llm-gateway (LLM_GATEWAY_FROM), or this one's as RUNTIME says. */
function gatewayCommand(): string[] {
  const from = process.env.LLM_GATEWAY_FROM;
  if (!from) return serviceCommand('llm-gateway', RUNTIME, GATEWAY_NODE_FLAGS);
  return [
    ...PRODUCTION_NODE_FLAGS,
    ...GATEWAY_NODE_FLAGS,
    path.join(from, 'services/llm-gateway/dist/main.js'),
  ];
}

const ready = (url: string) =>
  waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, {
    timeoutMs: 30_000,
    what: `${url}/readyz`,
  });

async function main(): Promise<void> {
  // MONGO_URL / AMQP_URL when set, else what the tests and `pnpm start` use (scripts/infra.sh).
  const infra = await resolveInfra();
  const MONGO_URL = infra.mongoUrl;
  const AMQP_URL = infra.amqpUrl;
  const suffix = randomBytes(3).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  const database = `bench_llm_gateway_${suffix}`;
  const namespace = `bench_llm_${suffix}`;
  await prepareRuntime(RUNTIME);
  const fake = await startFakeOpenAi({ apiKey: KEY });
  // Services act on no settings they have not read: the defaults, served as the settings service would.
  const settings = await new FakeSettings().start();
  // The fake keeps every request it saw; the bench only needs it to answer.
  fake.requests.push = () => 0;
  const gatewayUrl = 'http://127.0.0.1:18083';
  const gateway = spawn(process.execPath, gatewayCommand(), {
    env: {
      ...process.env,
      ...runtimeEnv(process.env.LLM_GATEWAY_FROM ? 'compiled' : RUNTIME),
      MONGO_URL,
      AMQP_URL,
      MONGO_DB: database,
      BROKER_NAMESPACE: namespace,
      PORT: '18083',
      PACK_INTERNAL_SECRET: secret,
      PACK_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
      PACK_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
      SETTINGS_URL: settings.url,
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const baselineDb = await mongoose
    .createConnection(MONGO_URL, { dbName: `${database}_baseline`, monitorCommands: true })
    .asPromise();
  let baselineCommands = 0;
  baselineDb.getClient().on('commandStarted', () => (baselineCommands += 1));
  let litellm: LiteLlm | undefined;
  let litellmProblem: string | undefined;
  let driver: GatewayDriver | undefined;
  const sides: Side[] = [];
  try {
    await ready(gatewayUrl);
    const created = await fetch(`${gatewayUrl}/v1/ai/llm_models/`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...principalHeaders(secret, 'POST', '/v1/ai/llm_models/', {
          id: 1,
          username: 'bench',
          role: 'admin',
        }),
      },
      body: JSON.stringify({
        name: 'bench model',
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        input_price_per_1m_tokens: '0.15',
        output_price_per_1m_tokens: '0.6',
        extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
      }),
    });
    if (created.status !== 201) throw new Error(`creating the bench model answered ${created.status}`);
    const modelId = ((await created.json()) as { id: number }).id;
    driver = await GatewayDriver.start(AMQP_URL, namespace, modelId);

    if (process.env.LITELLM !== '0') {
      try {
        litellm = await startLiteLlm(root, fake.url, KEY, 18090);
      } catch (error) {
        litellmProblem = error instanceof Error ? error.message : String(error);
      }
    }

    const calls = baselineDb.collection('llm_calls');
    for (const concurrency of CONCURRENCY) {
      const provider = chatCaller(fake.url, '/v1/chat/completions', concurrency, KEY);
      const providerFigures = await drive(provider.call, concurrency, duration);
      const before = await dbCommands(gatewayUrl);
      const byNameBefore = await commandsByName(gatewayUrl);
      const cpuBefore = cpuMs(gateway.pid);
      const shares = new CpuShares(gateway.pid);
      const gatewayFigures = await drive(() => driver!.call(), concurrency, duration);
      const gatewayCpu = (cpuMs(gateway.pid) - cpuBefore) / (gatewayFigures.calls + 50);
      process.stdout.write(
        `CPU ms per call at ${concurrency}: ${sharesLine(shares.perCall(gatewayFigures.calls + 50))}\n`,
      );
      const after = await dbCommands(gatewayUrl);
      const byName = [...(await commandsByName(gatewayUrl))]
        .map(
          ([name, n]) => [name, (n - (byNameBefore.get(name) ?? 0)) / (gatewayFigures.calls + 50)] as const,
        )
        .filter(([, perCall]) => perCall > 0)
        .map(([name, perCall]) => `${name} ${perCall.toFixed(2)}`);
      process.stdout.write(
        `llm-gateway database commands per call at ${concurrency}: ${byName.join(', ')}\n`,
      );
      const gatewayCommands = (after.all - before.all) / (gatewayFigures.calls + 50);
      const gatewayWrites = (after.writes - before.writes) / (gatewayFigures.calls + 50);
      const commandsBefore = baselineCommands;
      const baselineFigures = await drive(
        async () => {
          await provider.call();
          await calls.insertOne({
            at: new Date(),
            model_id: modelId,
            usage: { input_tokens: 12, output_tokens: 7 },
          });
        },
        concurrency,
        duration,
      );
      const perBaselineCall = (baselineCommands - commandsBefore) / (baselineFigures.calls + 50);
      await provider.close();
      let litellmFigures: Figures | undefined;
      let litellmCpu = NaN;
      if (litellm) {
        const proxy = chatCaller(litellm.url, '/v1/chat/completions', concurrency, litellm.key);
        const litellmCpuBefore = cpuMs(litellm.process.pid);
        litellmFigures = await drive(proxy.call, concurrency, duration, 20);
        litellmCpu = (cpuMs(litellm.process.pid) - litellmCpuBefore) / (litellmFigures.calls + 20);
        await proxy.close();
      }
      sides.push(
        {
          name: 'gateway',
          concurrency,
          figures: gatewayFigures,
          provider: providerFigures,
          commands: gatewayCommands,
          writes: gatewayWrites,
          cpuMsPerCall: gatewayCpu,
          rss: rssMb(gateway.pid),
        },
        {
          name: 'baseline',
          concurrency,
          figures: baselineFigures,
          provider: providerFigures,
          commands: perBaselineCall,
          writes: perBaselineCall,
          cpuMsPerCall: NaN,
          rss: rssMb(process.pid),
        },
        ...(litellmFigures
          ? [
              {
                name: 'litellm' as const,
                concurrency,
                figures: litellmFigures,
                provider: providerFigures,
                commands: 0,
                writes: 0,
                cpuMsPerCall: litellmCpu,
                rss: rssMb(litellm?.process.pid),
              },
            ]
          : []),
      );
    }
    // DASHBOARD=0 skips the 100,000 calls' dashboard (the tracing overhead runs, decision 0047).
    const dashboard =
      process.env.DASHBOARD === '0'
        ? undefined
        : await dashboardOver100kCalls(baselineDb.useDb(database), gatewayUrl, secret);
    process.stdout.write(
      report(sides, {
        duration,
        litellm: litellm
          ? `LiteLLM ${LITELLM_VERSION}`
          : `LiteLLM not measured: ${litellmProblem ?? 'LITELLM=0'}`,
      }),
    );
    if (dashboard)
      process.stdout.write(
        `dashboard over ${dashboard.calls} calls (${dashboard.documents} rollup documents, 30 days, group_by=model): ${dashboard.medianMs.toFixed(1)} ms (median of 5)\n`,
      );
    if (process.env.FALLBACK === '1')
      process.stdout.write(
        fallbackReport(
          await fallbackFigures({ gatewayUrl, secret, key: KEY, okProviderUrl: fake.url, driver, duration }),
        ),
      );
    if (process.env.SHOW_METRICS)
      process.stdout.write(
        (await (await fetch(`${gatewayUrl}/metrics`)).text())
          .split('\n')
          .filter((line) => /^(llm_gateway_overhead|db_command|broker_)/.test(line))
          .join('\n'),
      );
  } finally {
    await driver?.stop();
    litellm?.process.kill('SIGTERM');
    gateway.kill('SIGTERM');
    await new Promise((resolve) => (gateway.exitCode !== null ? resolve(null) : gateway.on('exit', resolve)));
    await baselineDb.dropDatabase().catch(() => undefined);
    await baselineDb.close();
    await dropDatabase(MONGO_URL, database).catch(() => undefined);
    await deleteQueues(AMQP_URL, GatewayDriver.queues(namespace)).catch(() => undefined);
    await fake.close();
    await settings.stop();
    await infra.stop?.();
  }
  // The profile is written when the gateway exits.
  if (PROFILE_DIR) process.stdout.write(topSelfTime(PROFILE_DIR));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
