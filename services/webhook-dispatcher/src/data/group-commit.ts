interface Waiting<I, O> {
  input: I;
  resolve: (output: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: calls that arrive while a batch is in flight wait, and then go to the database
 * together as one command. A lone call goes at once, so it adds no latency when idle; under load
 * the database sees one command per round trip instead of one per call.
 */
export class GroupCommit<I, O> {
  private waiting: Waiting<I, O>[] = [];
  private running = false;

  constructor(
    /** One output per input, in order. */
    private readonly run: (inputs: I[]) => Promise<O[]>,
    private readonly maxBatch = 200,
  ) {}

  submit(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      try {
        const outputs = await this.run(batch.map((entry) => entry.input));
        batch.forEach((entry, index) => entry.resolve(outputs[index]!));
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    this.running = false;
  }
}
