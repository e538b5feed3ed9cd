import type { Connection } from 'mongoose';
import { defaultGeneralSettings, type GeneralSettings } from '@pack/contracts';

export const SETTINGS_COLLECTION = 'general_settings';
const DOCUMENT_ID = 'global';

/** The settings live in one document; a missing document means every default. */
export class SettingsRepository {
  constructor(private readonly connection: Connection) {}

  async load(): Promise<GeneralSettings> {
    const stored = await this.connection
      .collection<{ _id: string; groups?: Partial<GeneralSettings> }>(SETTINGS_COLLECTION)
      .findOne({ _id: DOCUMENT_ID }, { projection: { groups: 1 } });
    const defaults = defaultGeneralSettings();
    if (!stored?.groups) return defaults;
    const merged = { ...defaults } as Record<string, unknown>;
    for (const [group, values] of Object.entries(stored.groups)) {
      merged[group] = { ...(defaults as Record<string, object>)[group], ...(values as object) };
    }
    return merged as GeneralSettings;
  }
}
