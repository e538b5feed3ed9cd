import type { z } from 'zod';
import { serviceEnvSchema } from '@pack/config';

export const settingsEnvSchema = serviceEnvSchema({ port: 8082, database: 'pack_settings' });
export type SettingsConfig = z.infer<typeof settingsEnvSchema>;
