import { z } from 'zod';
import { serviceEnvSchema } from '@pack/config';

export const catalogEnvSchema = serviceEnvSchema({ port: 8081, database: 'pack_catalog' }).extend({
  /** The settings service, whose general settings the catalog honours live. */
  SETTINGS_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8082'),
  /** How often Service Items left behind by an interrupted request are brought up to date. */
  ITEM_SYNC_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
});
export type CatalogConfig = z.infer<typeof catalogEnvSchema>;
