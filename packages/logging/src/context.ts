import { AsyncLocalStorage } from 'node:async_hooks';

/** What every log line and outgoing message of one unit of work carries. */
export interface RequestContext {
  correlationId: string;
  requestId?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function runWithContext<T>(context: RequestContext, fn: () => T): T {
  return storage.run(context, fn);
}

export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}
