import { randomUUID } from 'node:crypto';
import type { Logger } from '@pack/logging';
import type { RecoveryRecord, ResponseRecord, WebhookRecord } from '../model';
import type { RecoveryStore } from './store';
import type { ResponseStore } from '../responses/store';
import type { ServiceStore } from '../webhooks/store';
import type { ResendFiring } from './resend-firing';
import { refusal, resendTrigger, type RecoveryKick, type ResendObserver } from './resends';

/** How long a step waits for a free delivery slot or room in the rate window before looking again. */
const SLOT_WAIT_MS = 20;
/** How often a running recovery reads its webhook again. */
const RECHECK_MS = 1000;

export interface RecoveryRunnerOptions {
  /** Recoveries this replica works on at once; 0: none (it only answers HTTP). */
  concurrency: number;
  /**
   * FAILED fires read at once (on FerretDB the read scans the webhook's FAILED fires, so it is
   * done rarely); they are resent in steps of at most the free delivery slots (one schedule
   * update, one insert, one cursor move each).
   */
  batch: number;
  leaseMs: number;
  pollMs: number;
  /** Who this replica is (host:pid), recorded on the recoveries it holds. */
  holder: string;
  /**
   * Delivery slots free on this replica: a step resends at most that many, so its resends are
   * sent at once under this replica's lease instead of waiting SCHEDULED for a claim each.
   */
  freeSlots: () => number;
  /** The webhook as stored now (not a cached copy: a disable must stop a recovery). */
  webhookOf: (id: number) => Promise<WebhookRecord | null>;
  progress?: (running: number, remaining: number) => void;
  logger: Logger;
}

/**
 * Works through RUNNING recoveries, on any replica: one holds a recovery under a
 * lease, renewed at each step. A step reads the next FAILED fires after the cursor (oldest
 * first), records their resends (ids from the recovery and the original, so a step run again
 * after a crash finds them and adds none), then moves the cursor and the count in one
 * conditional update. A step takes no more fires than this replica has free delivery slots and
 * the webhook's rate window has room for, so the recovery runs at the rate limit's pace. A replica killed mid-step leaves the lease to expire; another takes over
 * from the cursor. The resends then go like any fire: the rate limit spaces them, the scheduler
 * sends them.
 */
export class RecoveryRunner implements RecoveryKick {
  private active = 0;
  private stopped = true;
  private timer?: NodeJS.Timeout;
  private polling = false;
  private again = false;
  private readonly running = new Map<string, { token: string; done: Promise<void> }>();

  constructor(
    private readonly recoveries: RecoveryStore,
    private readonly responses: Pick<ResponseStore, 'failedAfter'>,
    private readonly services: Pick<ServiceStore, 'find'>,
    private readonly firing: Pick<ResendFiring, 'resend' | 'rateRoom'>,
    private readonly observer: ResendObserver,
    private readonly options: RecoveryRunnerOptions,
  ) {}

  start(): void {
    this.stopped = false;
    // A replica that runs no recoveries neither polls nor reports their progress (its metric's help).
    if (this.options.concurrency === 0) return;
    this.timer = setInterval(() => void this.poll(), this.options.pollMs);
    this.timer.unref();
    this.kick();
  }

  /** Stops taking recoveries, lets each step under way end, and gives their leases back. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await Promise.allSettled([...this.running.values()].map((run) => run.done));
  }

  kick(): void {
    if (!this.stopped && this.options.concurrency > 0) setImmediate(() => void this.poll());
  }

  private async poll(): Promise<void> {
    if (this.polling) {
      this.again = true;
      return;
    }
    this.polling = true;
    try {
      do {
        this.again = false;
        while (!this.stopped && this.active < this.options.concurrency) {
          const token = randomUUID();
          const now = Date.now();
          const claimed = await this.recoveries.claim(
            new Date(now),
            new Date(now + this.options.leaseMs),
            token,
            this.options.holder,
          );
          if (!claimed) break;
          this.active += 1;
          const done = this.run(claimed, token)
            .catch((error: unknown) =>
              this.options.logger.warn(
                { err: error, recovery_id: claimed._id },
                'webhook recovery step failed',
              ),
            )
            .finally(() => {
              this.active -= 1;
              this.running.delete(claimed._id);
            });
          this.running.set(claimed._id, { token, done });
        }
      } while (this.again && !this.stopped);
      await this.report();
    } catch (error) {
      this.options.logger.warn({ err: error }, 'claiming webhook recoveries failed');
    } finally {
      this.polling = false;
    }
  }

  private async run(claimed: RecoveryRecord, token: string): Promise<void> {
    let recovery: RecoveryRecord | null = claimed;
    const window = { webhookId: claimed.webhook_id, since: claimed.since, until: claimed.until };
    let webhook: WebhookRecord | null = null;
    let why: string | null = null;
    let checkedAt = 0;
    /** Fires read after the cursor and not resent yet: one read serves several steps. */
    let buffer: ResponseRecord[] = [];
    while (recovery) {
      if (this.stopped) return this.recoveries.release(recovery._id, token);
      // The webhook and its Service are read again at most once a second: a disable stops the
      // recovery within a second (its resends then fail as a disabled webhook's fires do).
      if (!webhook || Date.now() - checkedAt >= RECHECK_MS) {
        webhook = await this.options.webhookOf(recovery.webhook_id);
        why = webhook ? await refusal(webhook, this.services) : 'the webhook was deleted';
        checkedAt = Date.now();
      }
      if (why || !webhook) {
        const reason = why ?? 'the webhook was deleted';
        await this.recoveries.end(recovery._id, token, 'CANCELLED', reason);
        this.options.logger.info({ recovery_id: recovery._id, reason }, 'webhook recovery cancelled');
        return;
      }
      if (buffer.length === 0) {
        buffer = await this.responses.failedAfter(window, recovery.cursor, this.options.batch);
        if (buffer.length === 0) {
          await this.recoveries.end(recovery._id, token, 'DONE', null);
          this.options.logger.info(
            { recovery_id: recovery._id, webhook_id: recovery.webhook_id, resent: recovery.resent },
            'webhook recovery done',
          );
          return;
        }
      }
      const room = Math.min(buffer.length, this.options.freeSlots(), this.firing.rateRoom(webhook._id));
      if (room === 0) {
        await new Promise((resolve) => setTimeout(resolve, SLOT_WAIT_MS));
        continue;
      }
      const batch = buffer.splice(0, room);
      const id = recovery._id;
      const resent = await this.firing.resend(
        webhook,
        batch.map((original) => resendTrigger(original, `${id}x${original.seq}`, id)),
      );
      this.observer.resent('recovery', resent.filter((one) => one.seq !== null).length);
      recovery = await this.recoveries.advance(
        id,
        token,
        recovery.cursor,
        batch[batch.length - 1]!.seq,
        batch.length,
        new Date(Date.now() + this.options.leaseMs),
      );
    }
    // The lease was lost (it expired and another replica took over): that replica goes on.
  }

  private async report(): Promise<void> {
    if (!this.options.progress) return;
    const { running, remaining } = await this.recoveries.progress();
    this.options.progress(running, remaining);
  }
}
