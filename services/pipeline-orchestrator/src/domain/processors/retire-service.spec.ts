import type { PageStart } from '@pack/contracts';
import type { ProcessorFilter, ProcessorRecord } from '../records/processor-records';
import type { ActiveSlots } from './active-slots';
import { Processors } from './processors';
import type { DirectoryStore } from '../records/store';
import type { ProcessorStore } from './store';

const record = (id: number, active: boolean) =>
  ({ _id: id, service_id: 7, kind: 'verify', active, deleted: false }) as ProcessorRecord;

/** A store over an array, paging by key as the repository does. */
function storeOf(records: ProcessorRecord[]): ProcessorStore {
  return {
    list: async (filter: ProcessorFilter, limit: number, start: PageStart) => {
      const after = (start.after?.[0] as number | undefined) ?? 0;
      const matches = records.filter((r) => r.service_id === filter.service_id && r._id > after);
      return { count: matches.length, items: matches.slice(start.offset, start.offset + limit) };
    },
  } as unknown as ProcessorStore;
}

describe('retiring the processors of a deleted Service', () => {
  it('deactivates every active processor, however many inactive ones come before it', async () => {
    const records = Array.from({ length: 1_203 }, (_, i) => record(i + 1, (i + 1) % 600 === 0));
    const processors = new Processors(storeOf(records), {} as DirectoryStore, {} as ActiveSlots);
    const deactivated: number[] = [];
    jest.spyOn(processors, 'update').mockImplementation(async (_principal, id) => {
      deactivated.push(id);
      return {} as never;
    });

    expect(await processors.retireService(7)).toBe(2);
    expect(deactivated).toEqual([600, 1200]);
  });
});
