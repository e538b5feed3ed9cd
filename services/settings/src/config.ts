import { z } from 'zod';
import { serviceEnvSchema } from '@pack/config';
import { withEncryptionEnv } from '@pack/secrets';

/** The base service variables, the encryption key ring (secret settings) and the write retry bound. */
export const settingsEnvSchema = withEncryptionEnv(
  serviceEnvSchema({ port: 8082, database: 'pack_settings' }).extend({
    /** How often a change is recomputed when concurrent writers keep taking its version number. */
    SETTINGS_WRITE_ATTEMPTS: z.coerce.number().int().min(1).max(1000).default(50),
  }),
);
export type SettingsConfig = z.infer<typeof settingsEnvSchema>;
