import { randomUUID } from 'node:crypto';
import type { Logger } from '@pack/logging';
import type { Delivery } from './deliver';
import type { ResponseRecord, WebhookRecord } from '../model';
import type { ResponseStore } from '../responses/store';
import { RetentionSweep } from './retention-sweep';

/**
 * Results being written, per slot at most, once their targets answered: a retention trim holds
 * result writes for 0.3-0.7 s on FerretDB under load, 100-300 deliveries at 350-420/s.
 */
export const WRITES_PER_SLOT = 10;

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
  /** Fires this replica is sending (leased, the target not yet answered). */
  private inFlight = 0;
  /** Fires whose target answered and whose result is still being written. */
  private writing = 0;
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
  private readonly retention: RetentionSweep;
  /** This replica left a fire to the scheduler (it was busy): look as soon as a slot frees. */
  private leftBehind = false;

  constructor(
    private readonly responses: ResponseStore,
    private readonly delivery: Delivery,
    private readonly options: SchedulerOptions,
  ) {
    this.retention = new RetentionSweep(responses, options);
  }

  start(): void {
    this.stopped = false;
    this.wake(Date.now());
    this.sweeper = setInterval(() => void this.retention.sweep(), this.options.retentionSweepMs);
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
    await this.retention.sweep();
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

  /** Slots free for fires sent at once (a recovery sizes its steps by them). */
  freeSlots(): number {
    return this.stopped ? 0 : Math.max(0, this.options.concurrency - this.inFlight);
  }

  unlease(): void {
    this.inFlight -= 1;
  }

  /** Sends a fire leased with leaseFor. */
  deliverNow(record: ResponseRecord, webhook: WebhookRecord): void {
    this.track((answered) => this.delivery.deliver(record, record.lease_token!, webhook, answered));
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
    this.retention.finishedFor(webhookId);
  }

  /**
   * Runs one delivery. Its slot is given back once the target answered, while the result is still
   * being written (at most WRITES_PER_SLOT x `concurrency` such writes; beyond, the slot waits for
   * its write): on FerretDB result writes wait for the collection while a retention trim runs,
   * and the slots would otherwise fill up with them and new fires would go the slow way,
   * SCHEDULED then claimed. The fire stays WAITING_FOR_RESPONSE under this replica's lease until
   * its result is written; stop() waits for the writes too.
   */
  private track(deliver: (answered: () => void) => Promise<unknown>): void {
    let released = false;
    let wrote = false;
    const release = () => {
      if (released) return;
      released = true;
      this.inFlight -= 1;
      // A freed slot: claiming costs a command, so only when work waits.
      if (this.leftBehind) this.wake(Date.now());
    };
    const answered = () => {
      if (released || this.writing >= WRITES_PER_SLOT * this.options.concurrency) return;
      wrote = true;
      this.writing += 1;
      release();
    };
    const tracked = deliver(answered)
      .catch((error: unknown) =>
        this.options.logger.error({ err: error }, 'webhook delivery failed unexpectedly'),
      )
      .finally(() => {
        if (wrote) this.writing -= 1;
        release();
        this.running.delete(tracked);
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
        const fire = claimed;
        this.track((answered) => this.delivery.deliver(fire, token, undefined, answered));
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

  private async reportBacklog(): Promise<void> {
    if (!this.options.onBacklog) return;
    try {
      this.options.onBacklog(await this.responses.backlog());
    } catch {
      // the next report will tell
    }
  }
}
