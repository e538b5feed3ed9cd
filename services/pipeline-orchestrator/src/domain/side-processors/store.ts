import type { Envelope, EventData, events, Page, PageStart } from '@pack/contracts';
import type { ExecutionNote } from '../pipelines/store';

type Decision = EventData<typeof events.changeInstanceValidationDecided>;

/** One validation per Change Instance: asked once, decided (or failed) once. */
export interface ValidationRecord {
  _id: number;
  service_id: number;
  processor_id: number;
  request_id: string;
  state: 'requested' | 'decided' | 'failed';
  decision: Decision['decision'] | null;
  reasons: string[];
  error: string | null;
  created_at: Date;
  decided_at: Date | null;
}

export interface ValidationStore {
  /** Inserts the validation with its generate request; false when this instance has one already. */
  insert(record: ValidationRecord, request: Envelope): Promise<boolean>;
  /** Ends a requested validation (with the decision's event, if any); false when it was not requested any more. */
  settle(id: number, set: Partial<ValidationRecord>, events: Envelope[]): Promise<boolean>;
}

/** Which optimizer notes a list shows: of one Service, optionally one processor or Service Item. */
export interface OptimizerNoteFilter {
  service_id: number;
  processor_id?: number;
  service_item_id?: number;
}

export interface OptimizerNoteStore {
  /** A page of the optimizer's notes matching `filter`, newest first. */
  optimizerNotes(filter: OptimizerNoteFilter, limit: number, start: PageStart): Promise<Page<ExecutionNote>>;
}
