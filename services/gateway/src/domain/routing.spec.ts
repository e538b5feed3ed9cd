import { connectionTestMaxMs } from '@pack/contracts';
import { upstreamFor, upstreamTimeoutMs } from './routing';

describe('routing table', () => {
  it.each([
    ['/v1/core/general_settings/', 'settings'],
    ['/v1/core/general_settings/generate_ui_schema/', 'settings'],
    ['/v1/ai/llm_models/test_connection/3/', 'llm-gateway'],
    ['/v1/external/serviceowner/pack/trigger/service_item/1/config/', 'pipeline-orchestrator'],
    ['/v1/external/serviceowner/pack/pipelines/latest/service_item/1/', 'pipeline-orchestrator'],
    ['/v1/external/serviceowner/webhooks/', 'webhook-dispatcher'],
    ['/v1/catalog/services/', 'catalog'],
  ])('sends %s to %s', (path, upstream) => {
    expect(upstreamFor(path)).toBe(upstream);
  });

  it('owns no other path', () => {
    expect(upstreamFor('/v1/core/general_settings')).toBeUndefined();
    expect(upstreamFor('/v2/catalog/services/')).toBeUndefined();
    expect(upstreamFor('/v1/unknown/')).toBeUndefined();
    // The gateway answers it itself (it sends all mail).
    expect(upstreamFor('/v1/core/general_settings/test_mail/')).toBeUndefined();
    expect(upstreamFor('/v1/core/auth/login/')).toBeUndefined();
  });
});

describe('route limits', () => {
  it('a connection test may take every attempt at the longest model timeout, and the waits between', () => {
    const limit = upstreamTimeoutMs('POST', '/v1/ai/llm_models/test_connection/3/', 30_000);
    expect(connectionTestMaxMs()).toBe(3 * 600_000 + 2 * 5_000);
    expect(limit).toBeGreaterThan(connectionTestMaxMs());
  });

  it('other routes keep the general limit', () => {
    expect(upstreamTimeoutMs('GET', '/v1/ai/llm_models/test_connection/3/', 30_000)).toBe(30_000);
    expect(upstreamTimeoutMs('POST', '/v1/ai/llm_models/', 30_000)).toBe(30_000);
    expect(upstreamTimeoutMs('POST', '/v1/ai/llm_models/test_connection/3/extra/', 30_000)).toBe(30_000);
  });
});
