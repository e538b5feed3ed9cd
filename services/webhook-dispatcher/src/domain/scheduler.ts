import { randomUUID } from 'node:crypto';
import type { Logger } from '@pack/logging';
import type { Delivery } from './deliver';
import type { ResponseRecord, WebhookRecord } from './model';
import type { ResponseStore } from './ports';

export interface SchedulerOptions {
  concurrency: number;
  pollMs: number;
  leaseMs: number;
  retentionSweepMs: number;
  /** external_api.webhook_response_retention, read live. */
  retention: () => number;
  onBacklog?: (count: number) => void;
  logger: Logger;
}

/**
 * Sends due fires, from this replica, at most `concurrency` at a time. Fires are claimed in the
 * database (a conditional update that sets a lease), so replicas never send one fire twice; a
 * fire whose replica died mid-delivery is claimed again once its lease has expired.
 */
export class Scheduler {
  private inFlight = 0;
  private readonly running = new Set<Promise<unknown>>();
  private timer?: NodeJS.Timeout;
  private nextWake = Infinity;
  private claiming = false;
  /** Settles when the claim loop running now ends (a claim it awaits may still start a delivery). */
  private claimLoopEnded: Promise<void> = Promise.resolve();
  private again = false;
  private stopped = true;
  private sweeper?: NodeJS.Timeout;
  private backlogTimer?: NodeJS.Timeout;
  private readonly dirty = new Set<number>();
  /** This replica left a fire to the scheduler (it was busy): look as soon as a slot frees. */
  private leftBehind = false;

  constructor(
    private readonly responses: ResponseStore,
    private readonly delivery: Delivery,
    private readonly options: SchedulerOptions,
  ) {}

  start(): void {
    this.stopped = false;
    this.wake(Date.now());
    this.sweeper = setInterval(() => void this.trimDirty(), this.options.retentionSweepMs);
    this.sweeper.unref();
    this.backlogTimer = setInterval(() => void this.reportBacklog(), 5000);
    this.backlogTimer.unref();
  }

  /** Stops claiming and waits for deliveries in flight (their leases keep them safe if cut short). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.sweeper);
    clearInterval(this.backlogTimer);
    await this.claimLoopEnded;
    await Promise.allSettled([...this.running]);
    await this.trimDirty();
  }

  /** A slot for a fire sent at once, or null when this replica is busy (the fire is then scheduled). */
  leaseFor(): { token: string; until: Date } | null {
    if (this.stopped || this.inFlight >= this.options.concurrency) {
      this.leftBehind = true;
      return null;
    }
    this.inFlight += 1;
    return { token: randomUUID(), until: new Date(Date.now() + this.options.leaseMs) };
  }

  unlease(): void {
    this.inFlight -= 1;
  }

  /** Sends a fire leased with leaseFor. */
  deliverNow(record: ResponseRecord, webhook: WebhookRecord): void {
    this.track(this.delivery.deliver(record, record.lease_token!, webhook));
  }

  /** Look for due fires at `at` (or at the next poll, whichever is sooner). */
  wake(at: number): void {
    if (this.stopped) return;
    const when = Math.min(at, Date.now() + this.options.pollMs);
    if (when >= this.nextWake) return;
    clearTimeout(this.timer);
    this.nextWake = when;
    this.timer = setTimeout(
      () => {
        this.nextWake = Infinity;
        void this.claimDue();
      },
      Math.max(0, when - Date.now()),
    );
    this.timer.unref();
  }

  finishedFor(webhookId: number): void {
    this.dirty.add(webhookId);
  }

  private track(work: Promise<unknown>): void {
    const tracked = work
      .catch((error: unknown) =>
        this.options.logger.error({ err: error }, 'webhook delivery failed unexpectedly'),
      )
      .finally(() => {
        this.inFlight -= 1;
        this.running.delete(tracked);
        // A finished delivery frees a slot; claiming costs a command, so only when work waits.
        if (this.leftBehind) this.wake(Date.now());
      });
    this.running.add(tracked);
  }

  private async claimDue(): Promise<void> {
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = true;
    let ended!: () => void;
    this.claimLoopEnded = new Promise((resolve) => (ended = resolve));
    try {
      while (!this.stopped && this.inFlight < this.options.concurrency) {
        const token = randomUUID();
        const now = Date.now();
        this.inFlight += 1;
        let claimed: ResponseRecord | null = null;
        try {
          claimed = await this.responses.claim(new Date(now), new Date(now + this.options.leaseMs), token);
        } finally {
          if (!claimed) this.inFlight -= 1;
        }
        if (!claimed) {
          this.leftBehind = false;
          break;
        }
        this.track(this.delivery.deliver(claimed, token));
      }
    } catch (error) {
      this.options.logger.warn({ err: error }, 'claiming due webhook fires failed');
    } finally {
      this.claiming = false;
      ended();
      this.wake(this.again ? Date.now() : Date.now() + this.options.pollMs);
      this.again = false;
    }
  }

  private async trimDirty(): Promise<void> {
    const ids = [...this.dirty];
    this.dirty.clear();
    for (const id of ids) {
      try {
        await this.responses.trim(id, this.options.retention());
      } catch (error) {
        this.dirty.add(id);
        this.options.logger.warn({ err: error, webhook_id: id }, 'trimming webhook responses failed');
      }
    }
  }

  private async reportBacklog(): Promise<void> {
    if (!this.options.onBacklog) return;
    try {
      this.options.onBacklog(await this.responses.backlog());
    } catch {
      // the next report will tell
    }
  }
}
