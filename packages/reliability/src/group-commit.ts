interface Waiting<I, R> {
  item: I;
  resolve(result: R): void;
  reject(error: unknown): void;
}

export interface GroupCommitOptions {
  /** Items per write at most (default 100). */
  maxItems?: number;
  /**
   * How long the first item of an idle group waits for others before its write (default 0: at
   * once). For writes nobody waits on to go on (records, tallies beside a request's answer): at a
   * request at a time, a few requests' writes then share one command instead of one each, and
   * they no longer run against the next request's own writes.
   */
  lingerMs?: number;
  /**
   * Whether an idle group's first item waits for the end of the event-loop turn it came in
   * (`setImmediate`) instead of being written at once: the items of one turn go in one write.
   * Messages and replies that arrive together are handled in one turn (one socket read holds
   * several deliveries; one poll finds several sockets readable), so without it the first of them
   * has a write of its own and the rest share the next. Nothing waits on a timer: the write
   * starts as soon as the turn's callbacks have run.
   */
  endOfTurn?: boolean;
}

/**
 * Group commit: an item is written at once (or after `lingerMs`) when no write is under way;
 * items that arrive meanwhile or during a write go together in the next one, whose `write`
 * returns one result per item in order. A failed write fails every item it held (the next items
 * get their own write). Used for inserts and tallies that many requests add to (docs/decisions/0018
 * and 0052).
 */
export class GroupCommit<I, R> {
  private queue: Waiting<I, R>[] = [];
  private writing = false;
  /** The linger of an idle group's first item, while it runs. */
  private lingering?: NodeJS.Timeout;
  /** The writes under way (settles when the queue is empty). */
  private draining: Promise<void> = Promise.resolve();
  private readonly maxItems: number;
  private readonly lingerMs: number;
  private readonly endOfTurn: boolean;
  /** The end-of-turn wait of an idle group's first item, while it runs. */
  private turning?: NodeJS.Immediate;

  constructor(
    private readonly write: (items: I[]) => Promise<R[]>,
    options: GroupCommitOptions = {},
  ) {
    this.maxItems = options.maxItems ?? 100;
    this.lingerMs = options.lingerMs ?? 0;
    this.endOfTurn = options.endOfTurn ?? false;
  }

  run(item: I): Promise<R> {
    const result = new Promise<R>((resolve, reject) => this.queue.push({ item, resolve, reject }));
    if (!this.writing) {
      this.writing = true;
      if (this.lingerMs > 0) this.lingering = setTimeout(() => this.startDrain(), this.lingerMs);
      else if (this.endOfTurn) this.turning = setImmediate(() => this.startDrain());
      else this.startDrain();
    }
    return result;
  }

  /**
   * Writes what waits now, without the rest of its linger, and settles once every item handed in
   * so far is written or failed: a stopping process calls it for writes nobody awaits.
   */
  async flush(): Promise<void> {
    if (this.lingering || this.turning) this.startDrain();
    await this.draining;
  }

  private startDrain(): void {
    clearTimeout(this.lingering);
    clearImmediate(this.turning);
    this.lingering = undefined;
    this.turning = undefined;
    this.draining = this.drain();
  }

  private async drain(): Promise<void> {
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
