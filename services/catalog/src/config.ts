import { z } from 'zod';
import { serviceEnvSchema } from '@pack/config';

export const catalogEnvSchema = serviceEnvSchema({ port: 8081, database: 'pack_catalog' }).extend({
  /** The settings service, whose general settings the catalog honours live. */
  SETTINGS_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8082'),
});
export type CatalogConfig = z.infer<typeof catalogEnvSchema>;
