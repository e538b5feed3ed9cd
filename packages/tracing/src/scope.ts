import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Which service of this process the running code belongs to. A deployed process runs one service
 * and never needs it; the test stack and `pnpm start` run all six in one process, where every
 * span would otherwise carry the process's one `service.name`. startService runs each service in
 * its scope, so everything it starts (its server, broker channels, database pool, timers) carries
 * the name by async context, and PackSpanProcessor gives its spans that service's resource.
 */
const scope = new AsyncLocalStorage<string>();

export function inService<T>(service: string, fn: () => T): T {
  return scope.run(service, fn);
}

export function currentService(): string | undefined {
  return scope.getStore();
}
