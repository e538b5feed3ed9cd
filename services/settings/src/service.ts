import { correlationId, on } from '@pack/broker';
import { createEnvelope, events, systemPrincipal, type SettingsGroup } from '@pack/contracts';
import { identityProviderPolicy } from '@pack/net-guard';
import type { ServiceDefinition } from '@pack/runtime';
import { fieldSecretCodec, keyRingFromEnv } from '@pack/secrets';
import { SettingsRepository, SETTINGS_COLLECTION } from './data/settings-repository';
import { GeneralSettingsUseCases } from './domain/settings-use-cases';
import { settingsRoutes } from './http/routes';
import { settingsMetrics } from './metrics';
import type { SettingsConfig } from './config';

export { settingsEnvSchema, type SettingsConfig } from './config';
export { SETTINGS_COLLECTION } from './data/settings-repository';

const SERVICE = 'settings';

/** Each secret is bound to its field, so a ciphertext copied into another field does not decrypt. */
export function settingsSecretContext(group: SettingsGroup, field: string): string {
  return `general_settings:${group}.${field}`;
}

export const settingsService: ServiceDefinition<SettingsConfig> = {
  name: SERVICE,
  version: '0.2.0',
  outboxCollections: [SETTINGS_COLLECTION],
  setup({ config, mongo, outbox, logger, metrics }) {
    const repository = new SettingsRepository(mongo.connection);
    const settings = new GeneralSettingsUseCases({
      store: repository,
      codec: fieldSecretCodec(keyRingFromEnv(config), {
        context: settingsSecretContext,
        logFields: (group: SettingsGroup, field) => ({ field: `${group}.${field}` }),
        // A value stored before encryption existed is read as is and re-encrypted at start.
        plaintext: 'kept',
        logger,
      }),
      logger,
      maxAttempts: config.SETTINGS_WRITE_ATTEMPTS,
      readCacheMs: config.SETTINGS_READ_CACHE_MS,
      newEvent: (data) =>
        createEnvelope(events.settingsChanged, data, { source: SERVICE, correlationId: correlationId() }),
      committed: (version) => {
        outbox.kick();
        repository
          .pruneSnapshots(version)
          .catch((error: unknown) => logger.warn({ err: error }, 'pruning old settings snapshots failed'));
      },
    });
    settingsMetrics(metrics, async () => {
      const state = await settings.read().catch(() => undefined);
      return state?.view.currency.currency;
    });
    return {
      routes: settingsRoutes(settings, identityProviderPolicy(config.PACK_ALLOWED_TARGET_CIDRS)),
      consumers: [
        {
          // Every replica hears every change, so its read cache never serves an older version for long.
          name: `${SERVICE}.read-cache`,
          broadcast: true,
          handlers: [on(events.settingsChanged, async ({ version }) => settings.invalidate(version))],
        },
      ],
      async onStart() {
        await repository.ensureIndexes();
        const { version } = await settings.reencryptSecrets(systemPrincipal(SERVICE));
        logger.info({ settings_version: version }, 'general settings ready');
      },
    };
  },
};
