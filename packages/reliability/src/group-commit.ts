interface Waiting<I, R> {
  item: I;
  /** When it was handed in (Date.now()): a paced write waits out its linger from then. */
  since: number;
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
  /**
   * Whether every write's first item waits out its `lingerMs` (counted from when it was handed
   * in), not only an idle group's. Without it, the items that came during a write are written as
   * soon as it ends, so under load a lingering group writes back to back, once per write's
   * duration; with it, at most once per `lingerMs` unless a write itself takes longer. For
   * tallies nobody waits on (rollups behind an answer).
   */
  paced?: boolean;
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
  private readonly paced: boolean;
  /** The end-of-turn wait of an idle group's first item, while it runs. */
  private turning?: NodeJS.Immediate;

  constructor(
    private readonly write: (items: I[]) => Promise<R[]>,
    options: GroupCommitOptions = {},
  ) {
    this.maxItems = options.maxItems ?? 100;
    this.lingerMs = options.lingerMs ?? 0;
    this.endOfTurn = options.endOfTurn ?? false;
    this.paced = options.paced ?? false;
  }

  run(item: I): Promise<R> {
    const result = new Promise<R>((resolve, reject) =>
      this.queue.push({ item, since: Date.now(), resolve, reject }),
    );
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
    for (;;) {
      if (this.lingering || this.turning) this.startDrain();
      const current = this.draining;
      await current;
      // A paced drain ends by lingering for the items that came during its write: write them too.
      if (!this.lingering && !this.turning && this.draining === current) return;
    }
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
      const wait =
        this.paced && this.queue.length > 0 ? this.queue[0]!.since + this.lingerMs - Date.now() : 0;
      if (wait > 0) {
        // Still `writing`: what comes meanwhile joins the queue, and this timer writes it all.
        this.lingering = setTimeout(() => this.startDrain(), wait);
        return;
      }
    }
    this.writing = false;
  }
}
