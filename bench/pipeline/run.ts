/**
 * bench/pipeline: Service Items driven through CONFIG, VERIFY and EXECUTION with an instant fake
 * provider, against the minimal same work, in the same run.
 *
 *   pipeline: the llm-gateway and the pipeline orchestrator as their own processes (production
 *             mode). Each of CONCURRENCY producers publishes an approval (as the catalog does)
 *             and waits until the item's EXECUTION is OK, then the next (closed loop).
 *   baseline: in this process, per item: insert a pipeline document, then per stage call the
 *             provider and update the stage (the mongodb driver), nothing else.
 *   provider: the fake provider called directly: what a stage spends in the provider.
 *
 * At concurrency 1 and 20: stages/s, stage time p50/p99 (from the previous stage's end, or the
 * approval, to the stage's end), orchestration overhead p50/p99 (stage time minus the provider's
 * at the same concurrency), database commands per stage of both services together (their
 * db_commands_total, background work included), where a stage's time goes, and the targets.
 *
 *   pnpm bench:pipeline     (DURATION=seconds per measurement, default 10)
 *   pnpm bench:pipeline --profile    (and the top functions by self time of both services while
 *                                     measured, from V8's sampling profiler; bench/pipeline/profile.ts)
 *
 * Also: CONCURRENCY=1 or 20 (that one alone), BREAKDOWN=1 (where a stage's time goes: the driver
 * then watches the generate requests and results too), SHOW_STAGES=1 (medians per stage), SHOW_SLOWEST=1,
 * SHOW_COMMANDS=1 (commands per stage by name), IDLE=seconds (the services' cost doing nothing),
 * KEEP_DATABASES=1 (left for a look), PRIVATE_FERRET=1 (a FerretDB of
 * its own on the local PostgreSQL, whose CPU alone is counted, with its database's backends:
 * the shared servers' other work left out), KEEP_PROFILES=1 (with --profile: the .cpuprofile files
 * kept, for a flame graph in Chrome's DevTools or speedscope). The local servers' CPU per stage (FerretDB, PostgreSQL,
 * RabbitMQ, from /proc) and this process's own (the driver: approvals out, requests, results and
 * progress events in) are printed with each measurement: on 2 cores every process's CPU is time
 * the stage path waits for.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mongoose from 'mongoose';
import { topologyNames } from '@pack/broker';
import {
  deleteQueues,
  dropDatabase,
  FakeSettings,
  resolveInfra,
  startFakeOpenAi,
  startPrivateFerret,
  waitFor,
} from '@pack/testkit';
import { chatCaller, cpuMs, dbCommands, drive, type Figures } from '../llm-gateway/measure';
import { PipelineDriver, type StageTiming } from './driver';
import {
  commandsByName,
  idleFigures,
  infraCpuMs,
  infraPerStage,
  privateDatabaseProcesses,
  stageMedians,
} from './figures';
import { profileSummary } from './profile';
import { report, type Row } from './report';
import { BenchServices } from './services';
import { rssMb } from '../crash-scenario/runtime';

const duration = Number(process.env.DURATION ?? 10);
const KEY = 'sk-bench-pipeline-0123';
const SERVICE_ID = 1;
const KINDS = ['config', 'verify', 'execution'];

async function main(): Promise<void> {
  // MONGO_URL / AMQP_URL when set, else what the tests and `pnpm start` use (scripts/infra.sh).
  const infra = await resolveInfra();
  // PRIVATE_FERRET=1: a FerretDB of the bench's own, so the database's CPU counted is this run's.
  const ferret = process.env.PRIVATE_FERRET
    ? await startPrivateFerret('patched', 'bench_pipeline')
    : undefined;
  const database = ferret && privateDatabaseProcesses(ferret.url, (statements) => ferret.sql(statements));
  const MONGO_URL = ferret?.url ?? infra.mongoUrl;
  const AMQP_URL = infra.amqpUrl;
  const fake = await startFakeOpenAi({ apiKey: KEY });
  fake.requests.push = () => 0;
  const settings = await new FakeSettings().start();
  const profileRoot = process.argv.includes('--profile')
    ? mkdtempSync(path.join(os.tmpdir(), 'bench-pipeline-profile-'))
    : undefined;
  const services = new BenchServices(MONGO_URL, AMQP_URL, settings.url, profileRoot);
  let measuredFrom: number | undefined;
  const baselineDb = await mongoose
    .createConnection(MONGO_URL, {
      dbName: `bench_pipeline_baseline_${services.suffix}`,
      monitorCommands: true,
    })
    .asPromise();
  let baselineCommands = 0;
  baselineDb.getClient().on('commandStarted', () => (baselineCommands += 1));
  let orchestratorDb: mongoose.Connection | undefined;
  let driver: PipelineDriver | undefined;
  try {
    const llm = await services.start('llm-gateway', 18183);
    const orchestrator = await services.start('pipeline-orchestrator', 18184);
    await services.publishService(SERVICE_ID);
    const model = await services.admin(llm, 'POST', '/v1/ai/llm_models/', {
      name: 'bench model',
      provider: 'vendor1',
      model_name: 'gpt-4o-mini',
      extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
    });
    if (model.status !== 201)
      throw new Error(`creating the bench model answered ${model.status}: ${JSON.stringify(model.body)}`);
    for (const kind of KINDS) {
      const body = {
        name: kind,
        service: SERVICE_ID,
        kind,
        llm_model: model.body.id,
        prompt: `Do ${kind}.`,
        active: true,
      };
      // The Service and model snapshots reach the orchestrator asynchronously: 400 until then.
      await waitFor(
        async () => (await services.admin(orchestrator, 'POST', '/v1/ai/processors/', body)).status === 201,
        {
          what: `the ${kind} processor`,
        },
      );
    }
    orchestratorDb = await mongoose
      .createConnection(MONGO_URL, { dbName: orchestrator.database })
      .asPromise();
    // Where a stage's time goes needs the requests and results watched too: asked for, not the
    // default (two more deliveries per stage to this process, on the same 2 cores).
    const breakdown = Boolean(process.env.BREAKDOWN || process.env.SHOW_STAGES || process.env.SHOW_SLOWEST);
    driver = await PipelineDriver.start(AMQP_URL, services.namespace, orchestratorDb, SERVICE_ID, breakdown);
    const commands = async () => (await dbCommands(llm.url)).all + (await dbCommands(orchestrator.url)).all;

    // IDLE=seconds: what the two services spend doing nothing (timers, sweeps, polls, pings).
    if (process.env.IDLE) process.stdout.write(await idleFigures(services.started, Number(process.env.IDLE)));
    const rows: Row[] = [];
    let baselineError: string | undefined;
    let nextId = 1;
    // CONCURRENCY=1 (or 20) measures one of the two alone.
    const concurrencies = process.env.CONCURRENCY ? [Number(process.env.CONCURRENCY)] : [1, 20];
    for (const concurrency of concurrencies) {
      const provider = chatCaller(fake.url, '/v1/chat/completions', concurrency, KEY);
      const providerFigures = await drive(provider.call, concurrency, Math.min(duration, 5));
      for (let i = 0; i < 5; i++) await driver.run();
      const timings: StageTiming[] = [];
      const before = await commands();
      const namedBefore = await Promise.all([llm.url, orchestrator.url].map(commandsByName));
      const cpuBefore = services.started.map((service) => cpuMs(service.process.pid));
      const infraBefore = infraCpuMs(database);
      const selfBefore = process.cpuUsage();
      measuredFrom ??= performance.now();
      const pipeline = await drive(
        async () => void timings.push(...(await driver!.run())),
        concurrency,
        duration,
        0,
      );
      const selfUsed = process.cpuUsage(selfBefore);
      const selfPerStage = (selfUsed.user + selfUsed.system) / 1000 / timings.length;
      process.stdout.write(
        `the bench process's CPU ms per stage at ${concurrency}: ${selfPerStage.toFixed(2)}\n`,
      );
      if (process.env.SHOW_SLOWEST)
        for (const t of [...timings].sort((a, b) => b.total - a.total).slice(0, 5))
          process.stdout.write(`slowest at ${concurrency}: ${JSON.stringify(t)}\n`);
      if (process.env.SHOW_STAGES) process.stdout.write(stageMedians(concurrency, timings));
      const pipelineCommands = ((await commands()) - before) / timings.length;
      if (process.env.SHOW_COMMANDS) {
        const namedAfter = await Promise.all([llm.url, orchestrator.url].map(commandsByName));
        namedAfter.forEach((after, i) => {
          const perStage = [...after]
            .map(([name, n]) => [name, (n - (namedBefore[i]!.get(name) ?? 0)) / timings.length] as const)
            .filter(([, n]) => n > 0)
            .map(([name, n]) => `${name} ${n.toFixed(2)}`);
          process.stdout.write(
            `commands per stage at ${concurrency}, ${i === 0 ? 'llm-gateway' : 'orchestrator'}: ${perStage.join(', ')}\n`,
          );
        });
      }
      process.stdout.write(
        `local servers' CPU ms per stage at ${concurrency}: ${infraPerStage(infraBefore, infraCpuMs(database), timings.length)}\n`,
      );
      const cpuPerStage = services.started.map(
        (service, i) => (cpuMs(service.process.pid) - cpuBefore[i]!) / timings.length,
      );
      const baselineTimes: number[] = [];
      const commandsBefore = baselineCommands;
      const pipelines = baselineDb.collection('pipelines');
      const baseline = await drive(
        async () => {
          const id = nextId++;
          await pipelines.insertOne({ _id: id as never, stages: {} }).catch((error: unknown) => {
            baselineError ??= String(error);
            throw error;
          });
          for (const stage of ['CONFIG', 'VERIFY', 'EXECUTION']) {
            const began = performance.now();
            await provider.call();
            await pipelines.updateOne(
              { _id: id as never },
              {
                $set: {
                  [`stages.${stage}`]: { state: 'OK', data_json: '{"vm":"c2"}', finished_at: new Date() },
                },
              },
            );
            baselineTimes.push(performance.now() - began);
          }
        },
        concurrency,
        duration,
        0,
      );
      const baselinePerStage = (baselineCommands - commandsBefore) / baselineTimes.length;
      await provider.close();
      rows.push(
        {
          ...row('pipeline', concurrency, pipeline, timings, providerFigures, pipelineCommands),
          cpuMsPerStage: cpuPerStage,
        },
        row(
          'baseline',
          concurrency,
          baseline,
          baselineTimes.map((total) => ({ total })),
          providerFigures,
          baselinePerStage,
        ),
      );
    }
    process.stdout.write(report(rows, duration));
    process.stdout.write(
      `RSS after the run (${services.runtime}): ${services.started.map((service) => `${service.name} ${rssMb(service.process.pid)?.toFixed(0)} MB`).join(', ')}\n`,
    );
    if (baselineError) process.stdout.write(`first baseline error: ${baselineError}\n`);
  } finally {
    await driver?.stop();
    await services.stop();
    if (profileRoot) {
      for (const service of services.started)
        process.stdout.write(
          profileSummary(service.name, service.profileDir!, (measuredFrom ?? 0) - service.spawnedAt),
        );
      if (process.env.KEEP_PROFILES) process.stdout.write(`profiles kept in ${profileRoot}\n`);
      else rmSync(profileRoot, { recursive: true, force: true });
    }
    await orchestratorDb?.close();
    await baselineDb.dropDatabase().catch(() => undefined);
    await baselineDb.close();
    for (const service of services.started)
      if (!process.env.KEEP_DATABASES) await dropDatabase(MONGO_URL, service.database).catch(() => undefined);
    await deleteQueues(AMQP_URL, queuesOf(services.namespace)).catch(() => undefined);
    await fake.close();
    await settings.stop();
    await ferret?.stop();
    await infra.stop?.();
  }
}

/** The durable queues the two services declared in the bench's namespace (removed afterwards). */
function queuesOf(namespace: string): string[] {
  const names = topologyNames(namespace);
  const consumers = [
    'llm-gateway.generate-requests',
    'llm-gateway.processors',
    'pipeline-orchestrator.pipelines',
    'pipeline-orchestrator.projections',
  ];
  return consumers.flatMap((c) => [names.queue(c), names.retryQueue(c), names.deadLetterQueue(c)]);
}

function row(
  side: Row['side'],
  concurrency: number,
  figures: Figures,
  timings: Partial<StageTiming>[],
  provider: Figures,
  commandsPerStage: number,
): Row {
  const sorted = (pick: (t: Partial<StageTiming>) => number | undefined) =>
    timings
      .map(pick)
      .filter((v): v is number => v !== undefined)
      .sort((a, b) => a - b);
  const at = (values: number[], q: number) =>
    values[Math.min(values.length - 1, Math.floor(q * values.length))] ?? NaN;
  const totals = sorted((t) => t.total);
  const elapsed = figures.calls / figures.callsPerSecond;
  return {
    side,
    concurrency,
    pipelines: figures.calls,
    stagesPerSecond: timings.length / elapsed,
    stageP50: at(totals, 0.5),
    stageP99: at(totals, 0.99),
    overheadP50: at(totals, 0.5) - provider.p50,
    overheadP99: at(totals, 0.99) - provider.p99,
    commandsPerStage,
    breakdown: {
      toRequest: at(
        sorted((t) => t.toRequest),
        0.5,
      ),
      inGateway: at(
        sorted((t) => t.inGateway),
        0.5,
      ),
      toEnd: at(
        sorted((t) => t.toEnd),
        0.5,
      ),
      provider: provider.p50,
    },
    errors: figures.errors,
    cpuMsPerStage: [],
  };
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
