import type { ScheduleRecord } from '../model';
import type { FirePlan } from './firing-rules';

/** A webhook's fire schedule (rate shaping, numbering); data/response-repository.ts implements it. */
export interface ScheduleStore {
  read(webhookId: number): Promise<ScheduleRecord | null>;
  /** Applies the plan and numbers the fire, if the schedule still meets its expectation; else null. */
  tryFire(webhookId: number, plan: FirePlan): Promise<ScheduleRecord | null>;
  countSuppressed(webhookId: number): Promise<void>;
}
