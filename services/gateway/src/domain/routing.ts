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
