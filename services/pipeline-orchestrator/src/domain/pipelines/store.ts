import type { PipelineRecord } from '../records/pipeline-records';
import type { StageNames } from './pipeline-views';

/** A note kept for a Service Item's later runs: a retrigger's feedback, or a Pack Optimizer's notes. */
export interface ExecutionNote {
  /** Unique per note: a repeat of the same note (a redelivery) is dropped. */
  _id: string;
  service_item_id: number;
  kind: 'feedback' | 'optimizer';
  /** The run the note is about. */
  run: number;
  text: string;
  created_at: Date;
  /** An optimizer's note: its Service, pipeline and processor (absent on notes kept before, 0056). */
  service_id?: number;
  pipeline_id?: number;
  processor_id?: number | null;
}

export interface ExecutionContextStore {
  /** Keeps a note; a note with the same id already kept is left as it is. */
  addNote(note: ExecutionNote): Promise<void>;
  /** The item's newest `limit` notes, newest first. */
  notes(serviceItemId: number, limit: number): Promise<ExecutionNote[]>;
  /** The item's newest `limit` pipelines, newest first. */
  recentRuns(serviceItemId: number, limit: number): Promise<PipelineRecord[]>;
  /** The provider's model identifier (`model_name`) of an LLM model as the orchestrator knows it, or null. */
  modelName(modelId: number): Promise<string | null>;
}

/** Names a view shows beside ids: processors (with their model) and Services. */
export interface PipelineNameStore {
  /** By processor id, deleted processors included; a processor not found is left out. */
  stages(processorIds: readonly number[]): Promise<Map<number, StageNames>>;
  /** Provider identifiers of models by id (the fallbacks that answered a stage); unknown ones left out. */
  models(modelIds: readonly number[]): Promise<Map<number, string>>;
  /** Service names by id; a Service not known is left out. */
  services(serviceIds: readonly number[]): Promise<Map<number, string>>;
}
