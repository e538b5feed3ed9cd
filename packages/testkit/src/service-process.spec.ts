import { spawnService } from './service-process';

describe('spawnService, a service as its own process', () => {
  it('fails at once with what the service wrote when it ends before it is ready, not at the timeout', async () => {
    const started = Date.now();
    // No secrets in its environment: the settings service refuses to start.
    const spawned = spawnService('settings', { LOG_LEVEL: 'silent' }, { readyTimeoutMs: 50_000 });
    await expect(spawned).rejects.toThrow(
      /^settings ended before it was ready \(status 78, signal null\): invalid configuration:\n.*PACK_INTERNAL_SECRET/s,
    );
    expect(Date.now() - started).toBeLessThan(50_000);
  }, 60_000);
});
