import { CEILINGS } from './ceilings';
import { spawnService } from './service-process';

describe('spawnService, a service as its own process', () => {
  it('fails at once with what the service wrote when it ends before it is ready, not at the timeout', async () => {
    // No secrets in its environment: the settings service refuses to start. Its wait for /readyz
    // would outlast the test's ceiling: only the failure at its end can pass the test.
    const spawned = spawnService('settings', { LOG_LEVEL: 'silent' }, { readyTimeoutMs: CEILINGS.hang });
    await expect(spawned).rejects.toThrow(
      /^settings ended before it was ready \(status 78, signal null\): invalid configuration:\n.*PACK_INTERNAL_SECRET/s,
    );
  });
});
