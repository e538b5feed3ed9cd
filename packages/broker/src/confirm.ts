/** The broker cannot take a publish now (no connection, no channel, no confirm in time). */
export class BrokerUnavailableError extends Error {
  constructor(message = 'message broker is not connected') {
    super(message);
    this.name = 'BrokerUnavailableError';
  }
}

/**
 * The broker answered a publish with a negative confirm: it did not store the message (a quorum
 * queue it routes to has no reachable leader, or refuses it). Nothing was lost, and the same
 * publish may succeed a moment later: broker trouble, not a failure of the message.
 */
export class PublishNackedError extends BrokerUnavailableError {
  constructor() {
    super('the broker nacked the publish (not stored)');
    this.name = 'PublishNackedError';
  }
}

/**
 * amqplib's errors for a publish callback: `message nacked` (a basic.nack) and `channel closed`
 * (the channel went away before the confirm) are the broker's trouble, named as such.
 */
function publishError(error: unknown): Error {
  if (error instanceof Error && error.message === 'message nacked') return new PublishNackedError();
  if (error instanceof Error && error.message === 'channel closed')
    return new BrokerUnavailableError('the channel closed before the broker confirmed the publish');
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Sends with `send` and resolves once the broker confirmed it; rejects with PublishNackedError on
 * a nack, BrokerUnavailableError when the channel closes or after `timeoutMs`.
 */
export function confirmed(timeoutMs: number, send: (done: (error: unknown) => void) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new BrokerUnavailableError(`no publish confirm within ${timeoutMs} ms`)),
      timeoutMs,
    );
    try {
      send((error) => {
        clearTimeout(timer);
        if (error) reject(publishError(error));
        else resolve();
      });
    } catch (error) {
      clearTimeout(timer);
      // amqplib throws IllegalOperationError at once on a channel that is closed already.
      if (error instanceof Error && error.name === 'IllegalOperationError')
        reject(new BrokerUnavailableError(error.message));
      else reject(error instanceof Error ? error : new Error(String(error)));
    }
  });
}

/** Waits for `promise` (success or failure alike), but no longer than `ms`. */
export function withinMs(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  const settled = promise.then(
    () => undefined,
    () => undefined,
  );
  return Promise.race([settled, timeout]).finally(() => clearTimeout(timer));
}
