interface Waiting<I, R> {
  item: I;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit: an item is written at once when no write is under way; items that arrive during
 * a write wait for it and go together in the next one, whose `write` returns one result per item
 * in order. An idle caller waits for nothing but its own write, a busy one shares a command with
 * the others. A failed write fails every item it held (the next items get their own write).
 */
export class GroupCommit<I, R> {
  private queue: Waiting<I, R>[] = [];
  private writing = false;

  constructor(
    private readonly write: (items: I[]) => Promise<R[]>,
    private readonly maxItems = 100,
  ) {}

  run(item: I): Promise<R> {
    const result = new Promise<R>((resolve, reject) => this.queue.push({ item, resolve, reject }));
    if (!this.writing) void this.drain();
    return result;
  }

  private async drain(): Promise<void> {
    this.writing = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxItems);
      try {
        const results = await this.write(batch.map((waiting) => waiting.item));
        batch.forEach((waiting, index) => waiting.resolve(results[index]!));
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
    this.writing = false;
  }
}
