import type { OptimizerNoteView, Page, Principal, PageStart } from '@pack/contracts';
import { NotFoundError } from '@pack/errors';
import type { PipelineNameStore } from '../pipelines/store';
import type { DirectoryStore } from '../records/store';
import type { OptimizerNoteFilter, OptimizerNoteStore } from './store';

/**
 * The Pack Optimizer's notes of a Service, as its owner or an admin reads them (docs/decisions/
 * 0056): the document the optimizer wrote after each run, newest first, a page at a time. The
 * same notes go into the next runs' CONFIG prompts (execution-context.ts); here they are read whole.
 */
export class OptimizerNotes {
  constructor(
    private readonly deps: {
      store: OptimizerNoteStore;
      directory: Pick<DirectoryStore, 'service'>;
      names: Pick<PipelineNameStore, 'stages'>;
    },
  ) {}

  async list(
    principal: Principal,
    filter: OptimizerNoteFilter,
    limit: number,
    start: PageStart,
  ): Promise<Page<OptimizerNoteView>> {
    const service = await this.deps.directory.service(filter.service_id);
    // Someone else's Service is as unknown as a missing one (the processors' and pipelines' rule).
    if (!service || (principal.role !== 'admin' && service.owner_id !== principal.id))
      throw new NotFoundError(`No Service ${filter.service_id} among your Services`);
    const page = await this.deps.store.optimizerNotes(filter, limit, start);
    const processorIds = page.items.flatMap((note) => (note.processor_id ? [note.processor_id] : []));
    const names = await this.deps.names.stages([...new Set(processorIds)]);
    return {
      count: page.count,
      items: page.items.map((note) => ({
        id: note._id,
        service: filter.service_id,
        service_item: note.service_item_id,
        pipeline: note.pipeline_id ?? 0,
        run: note.run,
        processor: note.processor_id ?? null,
        processor_name: (note.processor_id && names.get(note.processor_id)?.processor_name) || null,
        text: note.text,
        created_at: note.created_at.toISOString(),
      })),
    };
  }
}
