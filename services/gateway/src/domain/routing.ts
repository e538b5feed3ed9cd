import { connectionTestMaxMs } from '@pack/contracts';

/** The services behind the gateway. */
export type Upstream =
  'catalog' | 'settings' | 'llm-gateway' | 'pipeline-orchestrator' | 'webhook-dispatcher';

/** Public path prefixes and the service that owns each (DESIGN section 1). Longest prefix wins. */
export const ROUTING_TABLE: readonly (readonly [prefix: string, upstream: Upstream])[] = [
  ['/v1/core/general_settings/', 'settings'],
  ['/v1/catalog/', 'catalog'],
  ['/v1/ai/llm_models/', 'llm-gateway'],
  ['/v1/ai/dashboard/', 'llm-gateway'],
  ['/v1/ai/processors/', 'pipeline-orchestrator'],
  ['/v1/ai/services/', 'pipeline-orchestrator'],
  ['/v1/external/serviceowner/pack/', 'pipeline-orchestrator'],
  ['/v1/external/serviceowner/webhooks/', 'webhook-dispatcher'],
  ['/v1/external/serviceowner/webhook_responses/', 'webhook-dispatcher'],
];

/**
 * Paths under a service's prefix that the gateway answers itself: the test mail is sent where
 * all mail is sent, by the gateway, which knows the users' addresses (docs/decisions/0016).
 */
export const GATEWAY_PATHS: ReadonlySet<string> = new Set(['/v1/core/general_settings/test_mail/']);

const ordered = [...ROUTING_TABLE].sort((a, b) => b[0].length - a[0].length);

export function upstreamFor(path: string): Upstream | undefined {
  if (GATEWAY_PATHS.has(path)) return undefined;
  return ordered.find(([prefix]) => path.startsWith(prefix))?.[1];
}

/** What the gateway itself adds to a route's own bound: reading, forwarding, a loaded replica. */
const ROUTE_MARGIN_MS = 15_000;

/**
 * Routes that may take longer than the gateway's general limit (UPSTREAM_TIMEOUT_MS), with the
 * longest they may take: a connection test waits for the provider as long as the model's timeout
 * allows, on each documented attempt, and the gateway must not answer 504 first.
 */
const ROUTE_LIMITS: readonly { method: string; path: RegExp; ms: number }[] = [
  {
    method: 'POST',
    path: /^\/v1\/ai\/llm_models\/test_connection\/[^/]+\/$/,
    ms: connectionTestMaxMs() + ROUTE_MARGIN_MS,
  },
];

/** How long the gateway waits for the service's answer on this route. */
export function upstreamTimeoutMs(method: string, path: string, generalMs: number): number {
  const route = ROUTE_LIMITS.find((limit) => limit.method === method && limit.path.test(path));
  return route ? Math.max(route.ms, generalMs) : generalMs;
}
