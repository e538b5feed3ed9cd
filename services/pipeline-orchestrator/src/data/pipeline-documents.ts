import { STAGES } from '@pack/contracts';
import { OUTBOX_FIELD, OUTBOX_PENDING_FIELD } from '@pack/db';
import type { PipelineRecord } from '../domain/records/pipeline-records';
import { WATCHED_FIELD } from './sweep-repository';

/** How a pipeline is read: without its outbox and sweep flag (a record), or as a list row (SUMMARY). */
export const WITHOUT_OUTBOX = { [OUTBOX_FIELD]: 0, [OUTBOX_PENDING_FIELD]: 0, [WATCHED_FIELD]: 0 };
/** A list row: no outbox, PackData, generative UI nor declaration (the pipeline's own read has them). */
export const SUMMARY = {
  ...WITHOUT_OUTBOX,
  declaration_json: 0,
  execution_context: 0,
  ...Object.fromEntries(
    STAGES.flatMap((stage) =>
      ['pack_data_json', 'gen_ui_json'].map((field) => [`stages.${stage}.${field}`, 0]),
    ),
  ),
};

export function record(document: PipelineRecord & Record<string, unknown>): PipelineRecord {
  const {
    [OUTBOX_FIELD]: _events,
    [OUTBOX_PENDING_FIELD]: _pending,
    [WATCHED_FIELD]: _watched,
    ...fields
  } = document;
  return fields;
}
