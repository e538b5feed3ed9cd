import { replacedAttemptCleared, type StageRecord } from '../records/pipeline-records';

/**
 * A pushed stage: OK as a new attempt with no request out, so a late result of the old one is
 * dropped; nothing of the attempt it replaces stays (no answering model, fallback or prices).
 */
export function pushedFields(
  current: StageRecord,
  dataJson: string,
  now: Date,
): Partial<StageRecord> & { attempt: number } {
  return {
    ...replacedAttemptCleared(),
    state: 'OK',
    origin: 'pushed',
    attempt: current.attempt + 1,
    request_id: null,
    processor_id: null,
    schema_mode: null,
    started_at: now,
    finished_at: now,
    error: null,
    cost: null,
    pack_data_json: dataJson,
    gen_ui_json: null,
    gen_ui_valid: null,
  };
}
