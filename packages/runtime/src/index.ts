import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Broker } from '@pack/broker';
import type { ServiceEnv } from '@pack/config';
import {
  connectMongo,
  DAY_MS,
  isDatabaseUnavailable,
  mapDatabaseError,
  OutboxRelay,
  ProcessedEventsSweeper,
} from '@pack/db';
import { answerClientError, createHttpApp, opsEndpoints } from '@pack/http-kit';
import { createLogger } from '@pack/logging';
import { createMetrics } from '@pack/metrics';
import type { RunningService, ServiceContext, ServiceDefinition, StartOptions } from './definition';
import { drainable } from './drain';
import { traced } from './traced';
import { inService, tracing } from '@pack/tracing';

export type {
  RunningService,
  ServiceContext,
  ServiceDefinition,
  ServiceParts,
  StartOptions,
} from './definition';

/**
 * Starts a service: it listens at once and reports not-ready until MongoDB and RabbitMQ answer.
 * Everything it starts runs in its tracing scope (several services share the test stack's process).
 */
export function startService<C extends ServiceEnv>(
  definition: ServiceDefinition<C>,
  config: C,
  options: StartOptions = {},
): Promise<RunningService<C>> {
  return inService(definition.name, () => startInScope(definition, config, options));
}

async function startInScope<C extends ServiceEnv>(
  definition: ServiceDefinition<C>,
  config: C,
  options: StartOptions,
): Promise<RunningService<C>> {
  const logger = createLogger({
    service: definition.name,
    version: definition.version,
    level: config.LOG_LEVEL,
    destination: options.logDestination,
  });
  const metrics = createMetrics(definition.name);
  const mongo = connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger, metrics });
  const broker = new Broker({
    url: config.AMQP_URL,
    namespace: config.BROKER_NAMESPACE,
    service: definition.name,
    logger,
    metrics,
    transient: isDatabaseUnavailable,
  });
  const outbox = new OutboxRelay({
    connection: mongo.connection,
    broker,
    logger,
    metrics,
    collections: definition.outboxCollections ?? [],
  });
  const context: ServiceContext<C> = { config, logger, metrics, mongo, broker, outbox };
  const parts = await definition.setup(context);
  for (const consumer of parts.consumers ?? []) broker.consume(consumer);
  // Shared (non-broadcast) consumers are the ones that keep idempotency markers.
  const sweeper =
    parts.consumers?.some((consumer) => !consumer.broadcast) || parts.retained?.length
      ? new ProcessedEventsSweeper({
          connection: mongo.connection,
          logger,
          metrics,
          retentionMs: config.PROCESSED_EVENTS_RETENTION_DAYS * DAY_MS,
          retained: parts.retained ?? [],
        })
      : undefined;
  const usesBroker = definition.usesBroker ?? true;
  // With a `before` step the broker starts after it: no event is consumed before then.
  if (usesBroker && !parts.before) broker.start();

  // Not ready until the start-up steps ran (e.g. the gateway's PACK_ADMIN_TOKEN registered): a
  // request routed earlier could fail on state that is about to exist, and be cached that way.
  let startupDone = false;
  let beforeDone = false;
  const readiness = async () => ({
    ...(parts.before ? { [parts.before.name]: beforeDone } : {}),
    database: await mongo.isReady(),
    ...(usesBroker ? { broker: broker.isReady() } : {}),
    started: startupDone,
    ...(parts.readiness ? await parts.readiness() : {}),
  });
  // What /readyz answers, as a series to alert on (read on each scrape, like a probe).
  metrics.gauge(
    'service_ready',
    '1 when /readyz would answer ready (database, broker, ...)',
    [],
    async (gauge) => {
      const checks = await readiness().catch(() => ({ readiness: false }));
      gauge.set(Object.values(checks).every(Boolean) ? 1 : 0);
    },
  );
  const app = createHttpApp({
    service: definition.name,
    version: definition.version,
    logger,
    metrics,
    routes: parts.routes,
    internalSecret: config.PACK_INTERNAL_SECRET,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    authenticate: parts.authenticate,
    validateResponses: config.NODE_ENV === 'test',
    mapError: mapDatabaseError,
    readiness,
    serveMetrics: !definition.public,
  });

  const front = parts.front;
  const http = drainable(
    front
      ? (req, res) => {
          const next = () => {
            app(req, res);
          };
          if (!front(req, res, next)) next();
        }
      : app,
    config.SHUTDOWN_IDLE_GRACE_MS,
  );
  const server: Server = createServer(
    traced(http.handler, { service: definition.name, answerTraceparent: definition.public === true }),
  );
  server.on('clientError', answerClientError(logger));
  const url = await listen(server, config.PORT, config.HOST);
  server.keepAliveTimeout = 65_000;
  const port = (server.address() as AddressInfo).port;

  const ops = opsEndpoints({ service: definition.name, metrics, readiness, serveMetrics: true });
  const metricsServer = createServer((req, res) => {
    if (ops(req, res)) return;
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
  });
  const metricsUrl = await listen(metricsServer, config.METRICS_PORT, config.HOST);
  logger.info({ url, metrics_url: metricsUrl }, 'listening');

  let stopStarted: (() => Promise<void>) | void = undefined;
  // A stop while `before` still waits (the settings service down) ends the wait: nothing starts.
  let stopRequested!: () => void;
  const stopping = new Promise<'stopped'>((resolve) => {
    stopRequested = () => resolve('stopped');
  });
  const started = mongo.connected.then(async () => {
    if (parts.before) {
      if ((await Promise.race([parts.before.run(), stopping])) === 'stopped') return;
      beforeDone = true;
      if (usesBroker) broker.start();
    }
    if (usesBroker) outbox.start();
    sweeper?.start();
    stopStarted = parts.onStart ? await parts.onStart() : undefined;
    startupDone = true;
  });
  started.catch((error: unknown) => logger.error({ err: error }, 'start-up step failed'));

  return {
    url,
    port,
    metricsUrl,
    context,
    definition,
    routes: parts.routes,
    started,
    async stop() {
      stopRequested();
      parts.before?.cancel();
      await started.catch(() => undefined);
      await http.drain(server);
      // Handlers finish before what they use (the start-up steps' clients, breakers) is shut.
      await broker.stopConsuming();
      if (stopStarted) await stopStarted();
      await outbox.stop();
      await broker.close();
      await sweeper?.stop();
      await mongo.close();
      // Scrapes and probes are answered until the very end, so the last figures are not lost.
      await new Promise<void>((resolve) => {
        metricsServer.close(() => resolve());
        metricsServer.closeAllConnections();
      });
      logger.flush();
    },
  };
}

/** Listens and returns the base URL (the port actually bound, for port 0). */
async function listen(server: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
}

/** Entry point of a service process: start, then stop gracefully on SIGTERM or SIGINT. */
export function runMain<C extends ServiceEnv>(definition: ServiceDefinition<C>, config: C): void {
  startService(definition, config)
    .then((service) => {
      let stopping = false;
      const shutdown = (signal: string) => {
        if (stopping) return;
        stopping = true;
        service.context.logger.info({ signal }, 'shutting down');
        const force = setTimeout(() => process.exit(1), 25_000);
        force.unref();
        service
          .stop()
          .then(() => tracing()?.shutdown())
          .then(() => process.exit(0))
          .catch(() => process.exit(1));
      };
      process.on('SIGTERM', () => shutdown('SIGTERM'));
      process.on('SIGINT', () => shutdown('SIGINT'));
    })
    .catch((error: unknown) => {
      process.stderr.write(`${definition.name} failed to start: ${String(error)}\n`);
      process.exit(1);
    });
}
