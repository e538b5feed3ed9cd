import { z } from 'zod';
import { problemSchema, route } from '@pack/http-kit';
import type { SettingsRepository } from '../data/settings-repository';
import { settingsView } from '../domain/view';

const viewSchema = z.record(z.string(), z.record(z.string(), z.unknown()));

export function settingsRoutes(repository: SettingsRepository) {
  return [
    route({
      method: 'get',
      path: '/v1/core/general_settings/',
      summary: 'General settings of every group (secrets masked, CLIENT_SECRET never shown)',
      access: 'authenticated',
      responses: {
        200: { description: 'The settings document', schema: viewSchema },
        401: { description: 'No or unknown token', schema: problemSchema },
      },
      handler: async () => ({ body: settingsView(await repository.load()) }),
    }),
  ];
}
