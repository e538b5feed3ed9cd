import { DEFAULT_REMEDY } from './address';

/**
 * An outbound connection the guard refused. It names the host and why, never the URL, whose
 * user-info or query could hold credentials. Callers map it to their own answer (a 400 when a URL
 * is saved, a 502 when a call is made).
 */
export class TargetRefusedError extends Error {
  readonly code = 'TARGET_REFUSED';

  constructor(
    readonly host: string,
    readonly reason: string,
    /** What to set, and where, to allow the address. */
    readonly remedy: string = DEFAULT_REMEDY,
  ) {
    super(`refused to connect to ${host}: ${reason}; ${remedy}`);
    this.name = 'TargetRefusedError';
  }
}
