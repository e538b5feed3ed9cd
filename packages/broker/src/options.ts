import type { Logger } from '@pack/logging';
import type { Metrics } from '@pack/metrics';

export interface BrokerOptions {
  /** One URL, or a cluster's node URLs separated by commas (tried in turn; decision 0049). */
  url: string;
  namespace: string;
  service: string;
  logger: Logger;
  metrics: Metrics;
  /** How long a publish waits for the broker's confirm (default 5 s). */
  publishTimeoutMs?: number;
  /**
   * How long a publish the broker nacked (did not store) is tried again, each time on a fresh
   * channel after a short backoff, before it fails (default 5 s; decision 0049).
   */
  nackRetryMs?: number;
  /** AMQP heartbeat in seconds, for URLs that do not set `heartbeat` themselves (default 5). */
  heartbeatSeconds?: number;
  /** Quorum-queue redelivery limit: a message that keeps crashing its consumer is dead-lettered. */
  deliveryLimit?: number;
  /**
   * How long `close()` waits for running handlers before closing the channels (default 10 s).
   * A handler still running then has its message redelivered, to another replica or later.
   */
  shutdownTimeoutMs?: number;
  /**
   * Whether a handler's error says a dependency is away for a while (the database restarting):
   * the message is then retried later without counting an attempt, so an outage of any length
   * never dead-letters it (docs/decisions/0051).
   */
  transient?: (error: unknown) => boolean;
}
