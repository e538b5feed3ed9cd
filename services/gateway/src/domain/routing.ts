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
  ['/v1/external/serviceowner/pack/', 'pipeline-orchestrator'],
  ['/v1/external/serviceowner/webhooks/', 'webhook-dispatcher'],
  ['/v1/external/serviceowner/webhook_responses/', 'webhook-dispatcher'],
];

const ordered = [...ROUTING_TABLE].sort((a, b) => b[0].length - a[0].length);

export function upstreamFor(path: string): Upstream | undefined {
  return ordered.find(([prefix]) => path.startsWith(prefix))?.[1];
}
