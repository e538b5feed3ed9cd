import { createLogger } from '@pack/logging';
import type { SecretCodec, SettingsVersion } from './model';
import { GeneralSettingsUseCases } from './settings-use-cases';
import type { SettingsStore } from './store';

const codec: SecretCodec = { seal: (_g, _f, p) => p, open: (_g, _f, s) => s, needsReseal: () => false };

function harness(readCacheMs: number) {
  let clock = 0;
  let version: SettingsVersion = { version: 1, groups: {} };
  const store: SettingsStore & { loads: number } = {
    loads: 0,
    latest() {
      this.loads += 1;
      return Promise.resolve(version);
    },
    append: () => Promise.resolve(true),
    history: () => Promise.resolve({ count: 0, items: [] }),
  };
  const settings = new GeneralSettingsUseCases({
    store,
    codec,
    logger: createLogger({ service: 't', version: '0', level: 'silent' }),
    newEvent: () => {
      throw new Error('not used');
    },
    committed: () => undefined,
    maxAttempts: 1,
    readCacheMs,
    now: () => clock,
  });
  return {
    settings,
    store,
    tick: (ms: number) => (clock += ms),
    storeVersion: (n: number) => (version = { version: n, groups: {} }),
  };
}

describe('settings reads', () => {
  it('are served from memory within the cache window, with one load for concurrent readers', async () => {
    const { settings, store, tick } = harness(1000);
    await Promise.all([settings.read(), settings.read(), settings.read()]);
    await settings.read();
    expect(store.loads).toBe(1);
    tick(1000);
    await settings.read();
    expect(store.loads).toBe(2);
  });

  it('load again as soon as a newer version is announced, and never go back to an older one', async () => {
    const { settings, store, storeVersion } = harness(60_000);
    expect((await settings.read()).version).toBe(1);
    settings.invalidate(1);
    await settings.read();
    expect(store.loads).toBe(1);
    storeVersion(2);
    settings.invalidate(2);
    expect((await settings.read()).version).toBe(2);
    expect(store.loads).toBe(2);
  });

  it('read the store every time when the cache is off', async () => {
    const { settings, store } = harness(0);
    await settings.read();
    await settings.read();
    expect(store.loads).toBe(2);
  });
});
