/**
 * At most `limit` calls of `run` at a time; the others wait in order. The dispatcher's result
 * writes go through one: on FerretDB they wait for the collection while a statement that pins no
 * `_id` runs (the retention trim's deleteMany, a webhook's removal), and unbounded they would
 * hold every pooled connection (@pack/db keeps 20), so the schedule updates and inserts a new
 * fire needs before its event is acknowledged would wait for the pool.
 */
export class WriteGate {
  private running = 0;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.queue.push(resolve));
    else this.running += 1;
    try {
      return await work();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
