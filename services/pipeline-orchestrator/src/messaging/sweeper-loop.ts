import type { Logger } from '@pack/logging';
import type { StageSweeper } from '../domain/sweeping/sweeper';

/**
 * Runs the stage sweeper on every replica every `intervalMs` (one sweep at a time per replica),
 * and kicks the outbox relay with it, so a generate request left in a pipeline's outbox by a
 * crashed replica goes out within the same interval (docs/decisions/0028).
 */
export class SweeperLoop {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly sweeper: StageSweeper,
    private readonly options: { intervalMs: number; logger: Logger; kickOutbox(): void },
  ) {}

  start(): void {
    this.timer = setInterval(() => this.tick(), this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  private tick(): void {
    if (this.running) return;
    this.options.kickOutbox();
    this.running = this.sweeper
      .sweep()
      .then(() => undefined)
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'stage sweep failed'))
      .finally(() => {
        this.running = undefined;
      });
  }
}
