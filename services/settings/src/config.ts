import { z } from 'zod';
import { serviceEnvSchema } from '@pack/config';
import { withEncryptionEnv } from '@pack/secrets';

/** The base service variables, the encryption key ring (secret settings) and the write retry bound. */
export const settingsEnvSchema = withEncryptionEnv(
  serviceEnvSchema({ port: 8082, database: 'pack_settings' }).extend({
    /** How often a change is recomputed when concurrent writers keep taking its version number. */
    SETTINGS_WRITE_ATTEMPTS: z.coerce.number().int().min(1).max(1000).default(50),
    /**
     * How long a replica serves reads from memory. Its own changes and settings.changed events
     * refresh it at once; this only bounds staleness if an event is missed. 0 reads every time.
     */
    SETTINGS_READ_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
  }),
);
export type SettingsConfig = z.infer<typeof settingsEnvSchema>;
