import { randomUUID } from 'node:crypto';
import { currentContext } from '@pack/logging';

/** The correlation id of the current unit of work, or a new one. */
export function correlationId(): string {
  return currentContext()?.correlationId ?? randomUUID();
}
