import { CHANGE_INSTANCE_STATES, type ChangeInstanceState, type Role } from '@pack/contracts';

/**
 * The Change Instance state machine (docs/decisions/0005-change-instance-states.md).
 *
 *   PENDING     -> APPROVED | REJECTED | CANCELLED
 *   APPROVED    -> IN_PROGRESS | CANCELLED
 *   IN_PROGRESS -> COMPLETED | FAILED | CANCELLED
 *   FAILED      -> IN_PROGRESS            (a retry after the pipeline healed the configuration)
 *   REJECTED, COMPLETED, CANCELLED: final
 */
export const TRANSITIONS: Readonly<Record<ChangeInstanceState, readonly ChangeInstanceState[]>> = {
  PENDING: ['APPROVED', 'REJECTED', 'CANCELLED'],
  APPROVED: ['IN_PROGRESS', 'CANCELLED'],
  IN_PROGRESS: ['COMPLETED', 'FAILED', 'CANCELLED'],
  FAILED: ['IN_PROGRESS'],
  REJECTED: [],
  COMPLETED: [],
  CANCELLED: [],
};

/** States with a way out: something may still happen. A Service with such instances cannot be deleted. */
export const OPEN_STATES: readonly ChangeInstanceState[] = CHANGE_INSTANCE_STATES.filter(
  (state) => TRANSITIONS[state].length > 0,
);

export type Actor =
  | { kind: 'user'; userId: number; username: string; role: Role }
  | { kind: 'validator' }
  | { kind: 'auto_approval' }
  | { kind: 'pipeline' };

export type TransitionCheck =
  { ok: true } | { ok: false; reason: 'illegal' | 'already_decided' | 'not_allowed'; detail: string };

/**
 * Whether `actor` may move a Change Instance from `from` to `to`. The Service Owner and admins
 * may take any transition of the table; the consumer who submitted it may only withdraw it
 * (PENDING -> CANCELLED); the validator and auto-approval only decide a PENDING instance.
 * Whose instance it is, is the caller's to check.
 */
export function checkTransition(
  from: ChangeInstanceState,
  to: ChangeInstanceState,
  actor: Actor,
): TransitionCheck {
  if (actor.kind !== 'user') {
    if (from !== 'PENDING')
      return { ok: false, reason: 'already_decided', detail: `the change instance is already ${from}` };
    if (to !== 'APPROVED' && to !== 'REJECTED') {
      return {
        ok: false,
        reason: 'illegal',
        detail: `a ${actor.kind} decision can only approve or reject, not move to ${to}`,
      };
    }
    return { ok: true };
  }
  if (actor.role === 'consumer') {
    if (to !== 'CANCELLED')
      return { ok: false, reason: 'not_allowed', detail: 'a consumer can only cancel their change instance' };
    if (from !== 'PENDING') {
      return {
        ok: false,
        reason: 'illegal',
        detail: `a consumer can cancel a change instance only while it is PENDING; this one is ${from}`,
      };
    }
    return { ok: true };
  }
  if (TRANSITIONS[from].includes(to)) return { ok: true };
  const allowed = TRANSITIONS[from];
  return {
    ok: false,
    reason: 'illegal',
    detail:
      `a change instance cannot move from ${from} to ${to}; ` +
      (allowed.length > 0 ? `from ${from} it can move to ${allowed.join(', ')}` : `${from} is final`),
  };
}

/**
 * The moves a pipeline's progress may make (docs/decisions/0026), all rows of TRANSITIONS: a run
 * starts (APPROVED -> IN_PROGRESS), ends (COMPLETED or FAILED), or starts again after a failure.
 */
export const PIPELINE_TRANSITIONS: Readonly<
  Partial<Record<ChangeInstanceState, readonly ChangeInstanceState[]>>
> = {
  APPROVED: ['IN_PROGRESS'],
  IN_PROGRESS: ['COMPLETED', 'FAILED'],
  FAILED: ['IN_PROGRESS'],
};

/**
 * The states a pipeline's progress passes through from `from` to `to`: one move, or two when the
 * IN_PROGRESS before an end was not applied (its event is late or lost: it is passed through, so
 * webhooks on IN_PROGRESS still fire); [] when the instance is there already; null when the
 * pipeline may not move it (it is PENDING, or final).
 */
export function pipelinePath(
  from: ChangeInstanceState,
  to: ChangeInstanceState,
): ChangeInstanceState[] | null {
  if (from === to) return [];
  if (PIPELINE_TRANSITIONS[from]?.includes(to)) return [to];
  if (PIPELINE_TRANSITIONS[from]?.includes('IN_PROGRESS') && PIPELINE_TRANSITIONS.IN_PROGRESS?.includes(to))
    return ['IN_PROGRESS', to];
  return null;
}
