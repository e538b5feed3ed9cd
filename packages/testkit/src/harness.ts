import type { EventData, EventDefinition, Principal } from '@pack/contracts';
import type { DestinationStream } from '@pack/logging';
import type { Collection, Connection } from 'mongoose';
import { call, type CallResult } from './call';
import { deleteQueues, dropDatabase } from './cleanup';
import { testEnv } from './env';
import { publishEvent } from './events';
import { storedDocuments } from './outbox';
import { spawnService, type ServiceProcess, type ServiceProcessOptions } from './service-process';

export type Env = Record<string, string>;

/** What the harness needs of a running service (@pack/runtime's RunningService has it). */
export interface ServiceLike {
  url: string;
  /** The internal listener: /metrics, /healthz, /readyz. */
  metricsUrl: string;
  started: Promise<void>;
  stop(): Promise<void>;
  context: {
    config: { MONGO_URL: string; MONGO_DB: string; AMQP_URL: string; BROKER_NAMESPACE: string };
    broker: { declaredQueues(): string[] };
    mongo: { connection: Connection };
  };
}

/** Test doubles a service needs beside it (a fake settings service, an empty owner, ...). */
export interface Companions {
  /** What the service is pointed at them with (SETTINGS_URL, CATALOG_URL, ...). */
  env: Env;
  /** Stops the doubles the harness started (not the ones a test handed in). */
  close(): Promise<void>;
}

export const noCompanions: Companions = { env: {}, close: async () => undefined };

export interface HarnessOptions {
  /** Overrides of the test environment (testEnv and the kind's own defaults). */
  env?: Env;
  /** Where the service writes its log lines (set LOG_LEVEL in env to have any). */
  logDestination?: DestinationStream;
  /**
   * The database server the last instance to stop removes the database from: by default the
   * suite's (MONGO_URL of the test process), not the service's own connection, which a test may
   * point at a TcpProxy. A test that runs the service on a server of its own (a private
   * database pair) names that server here.
   */
  databaseServer?: string;
}

/**
 * One service, as its component tests start it: each service's test folder declares one
 * (`services/<name>/test/harness.ts`) and starts it with `startHarness`.
 */
export interface ServiceKind<S extends ServiceLike, C extends Companions, X, O extends HarnessOptions> {
  /** The service's name: its test database is named after it. */
  name: string;
  /** Environment every test of this service starts with (tuning), before `options.env`. */
  env?: Env;
  /** Starts the doubles the service talks to; replicas share the first instance's. */
  companions?(options: O): Promise<C>;
  /** Loads the configuration from `env` and starts the service in this process. */
  start(env: Env, options: O): Promise<S>;
  /** Waits until the service is ready for a test (beyond `started`): readyz, first settings load. */
  ready?(service: S): Promise<unknown>;
  /** The service's own helpers (create a model, announce a Service, change settings, ...). */
  extend(harness: ServiceHarness<S, C, X, O>): X;
}

/** A service under test, the same shape for every service. */
export interface ServiceHarness<S extends ServiceLike, C extends Companions, X, O extends HarnessOptions> {
  readonly service: S;
  readonly url: string;
  readonly metricsUrl: string;
  /** The environment it was started with (its MONGO_DB, BROKER_NAMESPACE, ...). */
  readonly env: Env;
  readonly namespace: string;
  readonly companions: C;
  /** Calls the service directly as `principal` (null: without principal headers). */
  as(
    principal: Principal | null,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<CallResult>;
  collection(name: string): Collection;
  /** Publishes an event onto the service's broker namespace (on the real broker), as another service would. */
  publish<D extends EventDefinition>(definition: D, data: EventData<D>, id?: string): Promise<string>;
  /** Every document of every collection of the service's database, as stored. */
  rawDatabase(): Promise<Record<string, Record<string, unknown>[]>>;
  /**
   * Another instance with this one's environment (so the same database, broker namespace and
   * doubles: a replica, or a restart after `stop({ keepData: true })`), `options.env` on top.
   */
  replica(options?: Partial<O>): Promise<Harness<S, C, X, O>>;
  /**
   * The same replica as its own OS process (spawnService), for a test that kills it: this
   * instance's environment on free ports, `options.env` on top. The test ends it; the database
   * stays this harness's to remove.
   */
  spawn(options?: ServiceProcessOptions & { env?: Env }): Promise<ServiceProcess>;
  /**
   * Stops this instance. The last instance of a database to stop removes the database, its
   * queues and the doubles the harness started, unless `keepData` (a restart follows).
   */
  stop(options?: { keepData?: boolean }): Promise<void>;
}

export type Harness<
  S extends ServiceLike,
  C extends Companions,
  X,
  O extends HarnessOptions,
> = ServiceHarness<S, C, X, O> & X;

/** The instances sharing one database and namespace, and what the last one to stop removes. */
interface Group<C> {
  running: number;
  queues: Set<string>;
  companions: C;
  mongoUrl: string;
  dbName: string;
  amqpUrl: string;
}

/**
 * Starts a service of `kind` in this process on its own database and broker namespace. The one
 * way tests start services: in this process (here, `replica()`, startReplicaPair, the e2e and
 * sign-in stacks built on it), or as an OS process a test may SIGTERM or SIGKILL (`spawn()`, or
 * spawnService with an environment of the test's own).
 */
export async function startHarness<S extends ServiceLike, C extends Companions, X, O extends HarnessOptions>(
  kind: ServiceKind<S, C, X, O>,
  options: O = {} as O,
): Promise<Harness<S, C, X, O>> {
  return start(kind, options, await prepare(kind, options));
}

/**
 * Starts two instances of `kind` at once on one new database and namespace (replicas coming up
 * together, as in a Deployment).
 */
export async function startReplicaPair<
  S extends ServiceLike,
  C extends Companions,
  X,
  O extends HarnessOptions,
>(kind: ServiceKind<S, C, X, O>, options: O = {} as O): Promise<[Harness<S, C, X, O>, Harness<S, C, X, O>]> {
  const shared = await prepare(kind, options);
  return Promise.all([start(kind, options, shared), start(kind, options, shared)]);
}

async function prepare<S extends ServiceLike, C extends Companions, X, O extends HarnessOptions>(
  kind: ServiceKind<S, C, X, O>,
  options: O,
): Promise<{ env: Env; group: Group<C> }> {
  const companions = (await kind.companions?.(options)) ?? (noCompanions as C);
  const env = testEnv(kind.name, { ...kind.env, ...companions.env, ...options.env });
  // The real servers, not the service's own connection (a test may point that at a TcpProxy).
  const group: Group<C> = {
    running: 0,
    queues: new Set(),
    companions,
    mongoUrl: options.databaseServer ?? process.env.MONGO_URL ?? env.MONGO_URL!,
    dbName: env.MONGO_DB!,
    amqpUrl: process.env.AMQP_URL ?? env.AMQP_URL!,
  };
  return { env, group };
}

async function start<S extends ServiceLike, C extends Companions, X, O extends HarnessOptions>(
  kind: ServiceKind<S, C, X, O>,
  options: O,
  { env, group }: { env: Env; group: Group<C> },
): Promise<Harness<S, C, X, O>> {
  const service = await kind.start(env, options);
  await service.started;
  await kind.ready?.(service);
  const { config, broker, mongo } = service.context;
  group.running += 1;
  let stopped = false;

  const harness: ServiceHarness<S, C, X, O> = {
    service,
    url: service.url,
    metricsUrl: service.metricsUrl,
    env,
    namespace: config.BROKER_NAMESPACE,
    companions: group.companions,
    as: (principal, method, path, body, headers) =>
      call(service.url, method, path, { principal, body, headers }),
    collection: (name) => mongo.connection.collection(name),
    publish: (definition, data, id) =>
      publishEvent(group.amqpUrl, config.BROKER_NAMESPACE, definition, data, id),
    rawDatabase: () => storedDocuments(service),
    replica: (more = {}) =>
      start(kind, more as O, { env: { ...env, PORT: '0', METRICS_PORT: '0', ...more.env }, group }),
    spawn: ({ env: more, ...options } = {}) =>
      spawnService(kind.name, { ...env, PORT: '0', METRICS_PORT: '0', ...more }, options),
    async stop({ keepData = false } = {}) {
      if (!stopped) {
        stopped = true;
        for (const queue of broker.declaredQueues()) group.queues.add(queue);
        await service.stop();
        group.running -= 1;
      }
      if (group.running > 0 || keepData) return;
      await dropDatabase(group.mongoUrl, group.dbName);
      if (group.queues.size > 0) await deleteQueues(group.amqpUrl, [...group.queues]);
      group.queues.clear();
      await group.companions.close();
    },
  };
  return Object.assign(harness, kind.extend(harness));
}
