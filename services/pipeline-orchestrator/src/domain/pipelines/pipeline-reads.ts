import {
  STAGES,
  type Page,
  type PipelineStatus,
  type PipelineSummary,
  type PipelineView,
  type Principal,
  type PageStart,
} from '@pack/contracts';
import type { DirectoryStore } from '../records/store';
import type { PipelineRecord } from '../records/pipeline-records';
import type { PipelineStore } from '../records/store';
import { fallbackAnswerers, pipelineSummary, pipelineView, type CostDisplay } from './pipeline-views';
import type { PipelineNameStore } from './store';

export type { StageNames } from './pipeline-views';

const processorsOf = (pipelines: readonly PipelineRecord[]) => [
  ...new Set(
    pipelines.flatMap((pipeline) =>
      STAGES.map((stage) => pipeline.stages[stage].processor_id).filter((id): id is number => id !== null),
    ),
  ),
];

/**
 * What callers read of pipelines: one pipeline's view and the list of the latest pipeline of each
 * Service Item of the caller's Services (admins: all), costs shown as the Charges Settings allow.
 */
export class PipelineReads {
  constructor(
    private readonly deps: {
      store: Pick<PipelineStore, 'listLatest'>;
      names: PipelineNameStore;
      directory: Pick<DirectoryStore, 'serviceIdsOwnedBy'>;
      costs: (principal: Principal) => CostDisplay;
    },
  ) {}

  async view(principal: Principal, pipeline: PipelineRecord): Promise<PipelineView> {
    const answerers = fallbackAnswerers(pipeline);
    // The models' read only when a fallback answered a stage.
    const [names, answered, services] = await Promise.all([
      this.deps.names.stages(processorsOf([pipeline])),
      answerers.length > 0 ? this.deps.names.models(answerers) : new Map<number, string>(),
      this.deps.names.services([pipeline.service_id]),
    ]);
    const serviceName = services.get(pipeline.service_id) ?? null;
    return pipelineView(pipeline, this.deps.costs(principal), names, answered, serviceName);
  }

  async latest(
    principal: Principal,
    filter: { status?: PipelineStatus },
    limit: number,
    start: PageStart,
  ): Promise<Page<PipelineSummary>> {
    const service_ids =
      principal.role === 'admin' ? undefined : await this.deps.directory.serviceIdsOwnedBy(principal.id);
    const page = await this.deps.store.listLatest({ ...filter, service_ids }, limit, start);
    const [names, services] = await Promise.all([
      this.deps.names.stages(processorsOf(page.items)),
      this.deps.names.services([...new Set(page.items.map((pipeline) => pipeline.service_id))]),
    ]);
    const costs = this.deps.costs(principal);
    return {
      count: page.count,
      items: page.items.map((pipeline) =>
        pipelineSummary(pipeline, costs, names, services.get(pipeline.service_id) ?? null),
      ),
    };
  }
}
