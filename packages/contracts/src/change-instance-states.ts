/**
 * The states of a Change Instance (docs/decisions/0005). A module of its own, without imports, so
 * the console's bundle can take it without the schemas around it.
 */
export const CHANGE_INSTANCE_STATES = [
  'PENDING',
  'APPROVED',
  'REJECTED',
  'IN_PROGRESS',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
] as const;
