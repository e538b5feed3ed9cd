import { GroupCommit } from './group-commit';

describe('GroupCommit', () => {
  it('sends a lone call at once, and the calls made meanwhile together in one batch, each with its own answer', async () => {
    const batches: number[][] = [];
    let release: () => void = () => {};
    const group = new GroupCommit<number, string>(async (inputs) => {
      batches.push(inputs);
      if (batches.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return inputs.map((input) => `answer ${input}`);
    });
    const first = group.submit(1);
    const later = [group.submit(2), group.submit(3), group.submit(4)];
    expect(batches).toEqual([[1]]);
    release();
    expect(await first).toBe('answer 1');
    expect(await Promise.all(later)).toEqual(['answer 2', 'answer 3', 'answer 4']);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('fails every call of a failed batch, and goes on with the next', async () => {
    let calls = 0;
    const group = new GroupCommit<number, number>(async (inputs) => {
      calls += 1;
      if (calls === 1) throw new Error('database unavailable');
      return inputs.map((input) => input * 10);
    });
    const failed = group.submit(1);
    const next = group.submit(2);
    await expect(failed).rejects.toThrow('database unavailable');
    expect(await next).toBe(20);
  });
});
