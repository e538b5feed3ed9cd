import { ConflictError } from '@pack/errors';

/**
 * The AI switches of the General Settings (group `ai_integration`, spec 2.8; DESIGN section 9;
 * docs/decisions/0040), read on every decision from the settings cache, so a change applies on
 * every replica without a restart.
 */
export interface AiSwitches {
  /**
   * `show_ai_processor`: a stage's processor (config, verify, execution, Universal Executor) may
   * be started and a Pack Optimizer asked. Off, nothing new is sent; a request already sent finishes.
   */
  processors(): boolean;
  /** `show_ai_validator`: the Change Instance Validator may decide new Change Instances. */
  validator(): boolean;
}

export const AI_PROCESSOR_SETTING = 'ai_integration.show_ai_processor';

/** What is off, in the words every message about it uses. */
export const AI_PROCESSORS_OFF =
  'AI processors are switched off (General Settings, AI Integration: show_ai_processor is off)';

/** Why a stage was not started: kept as the stage's `error` while it has not run (state null). */
export const AI_PROCESSORS_OFF_NOTE = `not started: ${AI_PROCESSORS_OFF}`;

/** The 409 of a trigger, retrigger or push retrigger while `show_ai_processor` is off. */
export function aiProcessorsOff(what: string): ConflictError {
  return new ConflictError(
    `${AI_PROCESSORS_OFF}: ${what} would start an AI stage; an administrator can turn show_ai_processor on`,
    { errors: { [AI_PROCESSOR_SETTING]: ['is off: no AI stage starts'] } },
  );
}
