/**
 * The inserts of numbered batches still running, per webhook (fire.ts): a webhook's next batch is
 * numbered while its previous batches are inserted, at most `limit` of them at a time.
 */
export class RecordingSlots {
  private readonly running = new Map<number, Set<Promise<void>>>();

  constructor(private readonly limit: number) {}

  /** Resolves once fewer than `limit` inserts of the webhook are running. */
  async room(webhookId: number): Promise<void> {
    for (let running = this.running.get(webhookId); running && running.size >= this.limit;)
      await Promise.race(running);
  }

  /** `recorded` must not reject. */
  track(webhookId: number, recorded: Promise<void>): void {
    const running = this.running.get(webhookId) ?? new Set();
    this.running.set(webhookId, running.add(recorded));
    void recorded.finally(() => {
      running.delete(recorded);
      if (running.size === 0 && this.running.get(webhookId) === running) this.running.delete(webhookId);
    });
  }
}
