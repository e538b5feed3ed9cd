import type { ProcessorKind } from '@pack/contracts';
import type { ProcessorRecord } from '../records/processor-records';
import { ProcessorCache } from './processor-cache';

const record = (id: number, service: number, kind: ProcessorKind) =>
  ({ _id: id, service_id: service, kind }) as ProcessorRecord;

describe('the remembered active processors', () => {
  let reads: string[];
  let clock: number;
  let current: Map<string, ProcessorRecord | null>;
  let failNext: boolean;
  let cache: ProcessorCache;

  beforeEach(() => {
    reads = [];
    clock = 0;
    failNext = false;
    current = new Map([
      ['1:verify', record(10, 1, 'verify')],
      ['2:verify', record(20, 2, 'verify')],
    ]);
    const source = {
      active: async (service: number, kind: ProcessorKind) => {
        reads.push(`${service}:${kind}`);
        if (failNext) {
          failNext = false;
          throw new Error('database gone');
        }
        return current.get(`${service}:${kind}`) ?? null;
      },
    };
    cache = new ProcessorCache(source, 5000, () => clock);
  });

  it('reads once for simultaneous and later lookups within the time to live, then again', async () => {
    const [a, b] = await Promise.all([cache.active(1, 'verify'), cache.active(1, 'verify')]);
    clock = 4999;
    const c = await cache.active(1, 'verify');
    expect([a?._id, b?._id, c?._id, reads]).toEqual([10, 10, 10, ['1:verify']]);
    clock = 5000;
    current.set('1:verify', null);
    expect(await cache.active(1, 'verify')).toBeNull();
    expect(reads).toEqual(['1:verify', '1:verify']);
  });

  it('forgets one Service when told, and everything on clear', async () => {
    await cache.active(1, 'verify');
    await cache.active(2, 'verify');
    current.set('1:verify', record(11, 1, 'verify'));
    current.set('2:verify', record(21, 2, 'verify'));
    cache.forget(1);
    expect((await cache.active(1, 'verify'))?._id).toBe(11);
    expect((await cache.active(2, 'verify'))?._id).toBe(20);
    cache.clear();
    expect((await cache.active(2, 'verify'))?._id).toBe(21);
  });

  it('does not remember a failed read', async () => {
    failNext = true;
    await expect(cache.active(1, 'verify')).rejects.toThrow('database gone');
    expect((await cache.active(1, 'verify'))?._id).toBe(10);
    expect(reads).toEqual(['1:verify', '1:verify']);
  });

  it('reads every time with a time to live of 0', async () => {
    const uncached = new ProcessorCache({ active: async () => (reads.push('x'), null) }, 0);
    await uncached.active(1, 'verify');
    await uncached.active(1, 'verify');
    expect(reads).toEqual(['x', 'x']);
  });

  it("for an approval, keeps a remembered processor but reads again over a remembered 'none'", async () => {
    await cache.active(1, 'verify');
    current.set('1:verify', record(11, 1, 'verify'));
    expect((await cache.activeOrRead(1, 'verify'))?._id).toBe(10);
    expect(await cache.active(3, 'config')).toBeNull();
    current.set('3:config', record(30, 3, 'config'));
    expect((await cache.activeOrRead(3, 'config'))?._id).toBe(30);
    expect((await cache.active(3, 'config'))?._id).toBe(30);
    expect(await cache.activeOrRead(4, 'config')).toBeNull();
    expect(reads).toEqual(['1:verify', '3:config', '3:config', '4:config']);
  });
});
