import type { mongo } from 'mongoose';
import { OUTBOX_PENDING_FIELD } from '@pack/db';
import type { PackDataRecord, PipelineRecord } from '../domain/records/pipeline-records';

/** The indexes of the pipelines and their PackData: each names the read or write that needs it. */
export async function ensurePipelineIndexes(
  pipelines: mongo.Collection<PipelineRecord>,
  packData: mongo.Collection<PackDataRecord>,
): Promise<void> {
  await pipelines.createIndex({ origin: 1 }, { name: 'origin', unique: true });
  await pipelines.createIndex({ service_item_id: 1, run: -1 }, { name: 'item_run' });
  await pipelines.createIndex({ [OUTBOX_PENDING_FIELD]: 1 }, { name: 'outbox_pending' });
  // The list of latest pipelines, newest first: all, by status, and an owner's Services
  // (top-level equalities FerretDB pushes down, docs/decisions/0033 and 0042).
  await pipelines.createIndex({ latest: 1, _id: -1 }, { name: 'latest_by_id' });
  await pipelines.createIndex({ latest: 1, status: 1, _id: -1 }, { name: 'latest_status_by_id' });
  await pipelines.createIndex(
    { service_id: 1, latest: 1, status: 1, _id: -1 },
    { name: 'service_latest_status_by_id' },
  );
  await packData.createIndex({ service_item_id: 1, stage: 1 }, { name: 'item_stage' });
}
