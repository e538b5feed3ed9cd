import type { ServiceDefinition } from '@pack/runtime';
import { SettingsRepository } from './data/settings-repository';
import { settingsRoutes } from './http/routes';
import type { SettingsConfig } from './config';

export { settingsEnvSchema, type SettingsConfig } from './config';

export const settingsService: ServiceDefinition<SettingsConfig> = {
  name: 'settings',
  version: '0.1.0',
  setup({ mongo }) {
    const repository = new SettingsRepository(mongo.connection);
    return { routes: settingsRoutes(repository) };
  },
};
