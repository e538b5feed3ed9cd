import type { Principal } from '@pack/contracts';
import { NotFoundError } from '@pack/errors';
import type { ServiceItemRecord } from '../records/pipeline-records';
import type { PipelineDeps } from '../stage-moves/pipeline-deps';

type Reads = Pick<PipelineDeps, 'items' | 'directory'>;

/** Whether the caller may see a Service's pipelines: an admin, or the Service's owner. */
export async function mayAccess(deps: Reads, principal: Principal, serviceId: number): Promise<boolean> {
  if (principal.role === 'admin') return true;
  const service = await deps.directory.service(serviceId);
  return service !== null && service.owner_id === principal.id;
}

/** The item with its latest approved declaration, if the caller may see it (404 otherwise). */
export async function visibleItem(
  deps: Reads,
  principal: Principal,
  serviceItemId: number,
): Promise<ServiceItemRecord> {
  const item = await deps.items.find(serviceItemId);
  if (!item || !(await mayAccess(deps, principal, item.service_id)))
    throw new NotFoundError(
      `No Service Item ${serviceItemId} with an approved declaration among your Services`,
    );
  return item;
}
