export class BrokerUnavailableError extends Error {
  constructor(message = 'message broker is not connected') {
    super(message);
    this.name = 'BrokerUnavailableError';
  }
}

/** Sends with `send` and resolves once the broker confirmed it (rejects on a nack or after `timeoutMs`). */
export function confirmed(timeoutMs: number, send: (done: (error: unknown) => void) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new BrokerUnavailableError(`no publish confirm within ${timeoutMs} ms`)),
      timeoutMs,
    );
    try {
      send((error) => {
        clearTimeout(timer);
        if (error) reject(error instanceof Error ? error : new Error('message was nacked by the broker'));
        else resolve();
      });
    } catch (error) {
      clearTimeout(timer);
      reject(error instanceof Error ? error : new Error(String(error)));
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
