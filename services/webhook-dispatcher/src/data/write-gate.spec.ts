import { WriteGate } from './write-gate';

describe('WriteGate', () => {
  it('runs at most `limit` writes at a time, the others in order, and frees its place on failure too', async () => {
    const gate = new WriteGate(2);
    const started: number[] = [];
    const finish: ((error?: Error) => void)[] = [];
    const write = (n: number) =>
      gate.run(
        () =>
          new Promise<number>((resolve, reject) => {
            started.push(n);
            finish[n] = (error) => (error ? reject(error) : resolve(n));
          }),
      );
    const results = [1, 2, 3, 4].map((n) => write(n).catch((error: Error) => error.message));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([1, 2]);
    finish[2]!(new Error('lost'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([1, 2, 3]);
    finish[1]!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([1, 2, 3, 4]);
    finish[3]!();
    finish[4]!();
    expect(await Promise.all(results)).toEqual([1, 'lost', 3, 4]);
  });
});
