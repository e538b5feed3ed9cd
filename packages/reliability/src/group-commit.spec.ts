import { GroupCommit } from './group-commit';

/** A write that records each batch and finishes when the test says so. */
function heldWrite() {
  const batches: { items: number[]; finish(error?: Error): void }[] = [];
  const write = (items: number[]) =>
    new Promise<string[]>((resolve, reject) =>
      batches.push({
        items,
        finish: (error) => (error ? reject(error) : resolve(items.map((item) => `wrote ${item}`))),
      }),
    );
  return { batches, write };
}

describe('GroupCommit', () => {
  it('writes an idle group’s first item at once, and the items of a write together in the next one', async () => {
    const { batches, write } = heldWrite();
    const commits = new GroupCommit(write);
    const first = commits.run(1);
    expect(batches.map((batch) => batch.items)).toEqual([[1]]);
    const later = [commits.run(2), commits.run(3)];
    batches[0]!.finish();
    await expect(first).resolves.toBe('wrote 1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches.map((batch) => batch.items)).toEqual([[1], [2, 3]]);
    batches[1]!.finish();
    await expect(Promise.all(later)).resolves.toEqual(['wrote 2', 'wrote 3']);
  });

  describe('with endOfTurn', () => {
    it('the items handed in during one event-loop turn go in one write, started when the turn ends', async () => {
      const { batches, write } = heldWrite();
      const commits = new GroupCommit(write, { endOfTurn: true });
      const results = [commits.run(1), commits.run(2), commits.run(3)];
      expect(batches).toHaveLength(0);
      await new Promise((resolve) => setImmediate(resolve));
      expect(batches.map((batch) => batch.items)).toEqual([[1, 2, 3]]);
      // Items during that write go together in the next one, as without the option.
      results.push(commits.run(4), commits.run(5));
      batches[0]!.finish();
      await new Promise((resolve) => setImmediate(resolve));
      expect(batches.map((batch) => batch.items)).toEqual([
        [1, 2, 3],
        [4, 5],
      ]);
      batches[1]!.finish();
      await expect(Promise.all(results)).resolves.toEqual([1, 2, 3, 4, 5].map((item) => `wrote ${item}`));
    });

    it('flush writes what waits for the end of the turn at once', async () => {
      const { batches, write } = heldWrite();
      const commits = new GroupCommit(write, { endOfTurn: true });
      const result = commits.run(1);
      const flushing = commits.flush();
      expect(batches.map((batch) => batch.items)).toEqual([[1]]);
      batches[0]!.finish();
      await flushing;
      await expect(result).resolves.toBe('wrote 1');
      // The turn's end finds nothing left to start.
      await new Promise((resolve) => setImmediate(resolve));
      expect(batches).toHaveLength(1);
    });
  });

  describe('with lingerMs', () => {
    // The linger on the test's clock: how late a loaded machine runs a timer cannot merge or split writes.
    beforeEach(() => jest.useFakeTimers());
    afterEach(() => jest.useRealTimers());

    it('the first item waits for the others of that time: one write for all', async () => {
      const { batches, write } = heldWrite();
      const commits = new GroupCommit(write, { lingerMs: 40 });
      const results = [commits.run(1)];
      await jest.advanceTimersByTimeAsync(10);
      results.push(commits.run(2), commits.run(3));
      await jest.advanceTimersByTimeAsync(29);
      expect(batches).toHaveLength(0);
      await jest.advanceTimersByTimeAsync(1);
      expect(batches.map((batch) => batch.items)).toEqual([[1, 2, 3]]);
      batches[0]!.finish();
      await expect(Promise.all(results)).resolves.toEqual(['wrote 1', 'wrote 2', 'wrote 3']);
      // Idle again: the next item lingers anew.
      const next = commits.run(4);
      await jest.advanceTimersByTimeAsync(39);
      expect(batches).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(batches.map((batch) => batch.items)).toEqual([[1, 2, 3], [4]]);
      batches[1]!.finish();
      await expect(next).resolves.toBe('wrote 4');
    });
    it('paced: the items that came during a write wait out their own linger before the next one', async () => {
      const { batches, write } = heldWrite();
      const commits = new GroupCommit(write, { lingerMs: 40, paced: true });
      const results = [commits.run(1)];
      await jest.advanceTimersByTimeAsync(40);
      expect(batches.map((batch) => batch.items)).toEqual([[1]]);
      await jest.advanceTimersByTimeAsync(5);
      results.push(commits.run(2));
      await jest.advanceTimersByTimeAsync(5);
      batches[0]!.finish();
      // Item 2 came 5 ms into the write: it waits until 40 ms after it came, with what comes meanwhile.
      await jest.advanceTimersByTimeAsync(30);
      results.push(commits.run(3));
      expect(batches).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(4);
      expect(batches).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(batches.map((batch) => batch.items)).toEqual([[1], [2, 3]]);
      batches[1]!.finish();
      await expect(Promise.all(results)).resolves.toEqual(['wrote 1', 'wrote 2', 'wrote 3']);
    });

    it('paced: flush writes at once what waits for the next write too', async () => {
      const { batches, write } = heldWrite();
      const commits = new GroupCommit(write, { lingerMs: 1000, paced: true });
      const results = [commits.run(1)];
      let flushed = false;
      const flushing = commits.flush().then(() => (flushed = true));
      await jest.advanceTimersByTimeAsync(0);
      results.push(commits.run(2));
      batches[0]!.finish();
      await jest.advanceTimersByTimeAsync(0);
      expect(batches.map((batch) => batch.items)).toEqual([[1], [2]]);
      expect(flushed).toBe(false);
      batches[1]!.finish();
      await flushing;
      await expect(Promise.all(results)).resolves.toEqual(['wrote 1', 'wrote 2']);
    });

    it('flush writes what lingers at once and settles once every item handed in is written', async () => {
      const { batches, write } = heldWrite();
      const commits = new GroupCommit(write, { lingerMs: 1000 });
      const results = [commits.run(1), commits.run(2)];
      let flushed = false;
      const flushing = commits.flush().then(() => (flushed = true));
      await jest.advanceTimersByTimeAsync(0);
      expect(batches.map((batch) => batch.items)).toEqual([[1, 2]]);
      results.push(commits.run(3));
      batches[0]!.finish();
      await jest.advanceTimersByTimeAsync(0);
      expect(flushed).toBe(false);
      expect(batches.map((batch) => batch.items)).toEqual([[1, 2], [3]]);
      batches[1]!.finish();
      await flushing;
      await expect(Promise.all(results)).resolves.toEqual(['wrote 1', 'wrote 2', 'wrote 3']);
      // Nothing waits: a flush settles at once.
      await expect(commits.flush()).resolves.toBeUndefined();
    });
  });

  it('fails every item of a failed write; the next items get a write of their own', async () => {
    const { batches, write } = heldWrite();
    const commits = new GroupCommit(write, { maxItems: 2 });
    const first = commits.run(1);
    const during = Promise.allSettled([commits.run(2), commits.run(3), commits.run(4)]);
    batches[0]!.finish(new Error('database away'));
    await expect(first).rejects.toThrow('database away');
    await new Promise((resolve) => setImmediate(resolve));
    // At most maxItems per write.
    expect(batches.map((batch) => batch.items)).toEqual([[1], [2, 3]]);
    batches[1]!.finish(new Error('still away'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches.map((batch) => batch.items)).toEqual([[1], [2, 3], [4]]);
    batches[2]!.finish();
    const settled = await during;
    expect(settled.map((each) => each.status)).toEqual(['rejected', 'rejected', 'fulfilled']);
  });
});
