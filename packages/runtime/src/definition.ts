import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request } from 'express';
import type { Broker, ConsumerSpec } from '@pack/broker';
import type { ServiceEnv } from '@pack/config';
import type { Principal } from '@pack/contracts';
import type { Mongo, OutboxRelay, RetainedRecords } from '@pack/db';
import type { AnyRoute } from '@pack/http-kit';
import type { DestinationStream, Logger } from '@pack/logging';
import type { Metrics } from '@pack/metrics';

/** What a service is made of and what it gets to run with: the contract between a service and the runtime. */
export interface ServiceContext<C extends ServiceEnv> {
  config: C;
  logger: Logger;
  metrics: Metrics;
  mongo: Mongo;
  broker: Broker;
  outbox: OutboxRelay;
}

export interface ServiceParts {
  routes: readonly AnyRoute[];
  consumers?: readonly ConsumerSpec[];
  authenticate?: (req: Request) => Promise<Principal | null>;
  /**
   * Sees every request before express and returns true when it answered it (the gateway's
   * proxy: the hot path of the platform skips express entirely). One that answers later can
   * still hand the request on with `next` (the gateway's healthcheck limits).
   */
  front?: (req: IncomingMessage, res: ServerResponse, next: () => void) => boolean;
  /** Extra readiness checks beyond the database and the broker. */
  readiness?: () => Promise<Record<string, boolean>>;
  /**
   * What the service must have before it acts (its general settings loaded): consumers, the
   * outbox and onStart wait for it, and /readyz answers not ready (`settings: false`, the
   * check being named by `name`) meanwhile, so nothing acts on defaults it has not confirmed.
   * Must not wait on this service.
   */
  before?: {
    name: string;
    run: () => Promise<void>;
    /** Ends what run started (at stop). */ cancel: () => void;
  };
  /** Runs once the HTTP server listens (timers, caches); its result runs at shutdown. */
  onStart?: () => Promise<(() => Promise<void>) | void>;
  /**
   * Records kept only while a copy of their event may come (id claims, call claims): swept with
   * the idempotency markers after PROCESSED_EVENTS_RETENTION_DAYS (@pack/db ProcessedEventsSweeper).
   */
  retained?: readonly RetainedRecords[];
}

export interface ServiceDefinition<C extends ServiceEnv> {
  name: string;
  version: string;
  /** Collections whose documents carry outbox arrays (see @pack/db outbox). */
  outboxCollections?: readonly string[];
  /** False for a service that neither publishes nor consumes (the gateway). */
  usesBroker?: boolean;
  /**
   * True when the main port faces clients outside the cluster (the gateway): /metrics is then
   * served on the metrics listener only. Internal services answer it on both (docs/decisions/0020).
   */
  public?: boolean;
  setup: (context: ServiceContext<C>) => Promise<ServiceParts> | ServiceParts;
}

export interface RunningService<C extends ServiceEnv> {
  url: string;
  port: number;
  /** The internal listener: /metrics, /healthz, /readyz (METRICS_PORT). */
  metricsUrl: string;
  context: ServiceContext<C>;
  /** What it was started from (tests read its outbox collections). */
  definition: ServiceDefinition<C>;
  /** Every route the service declared (tests go over all of them). */
  routes: readonly AnyRoute[];
  /** Resolves once the database is connected and onStart has run. */
  started: Promise<void>;
  stop(): Promise<void>;
}

export interface StartOptions {
  logDestination?: DestinationStream;
}
