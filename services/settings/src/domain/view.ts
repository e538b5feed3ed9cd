import {
  deriveAiIntegration,
  SETTINGS_SECRET_FIELDS,
  SETTINGS_WRITE_ONLY_FIELDS,
  type GeneralSettings,
  type SettingsGroup,
} from '@pack/contracts';

/** At most the last 4 characters of a secret are shown, and only for secrets long enough to hide the rest. */
export function maskSecret(value: string): string {
  if (value === '') return '';
  return value.length >= 12 ? `********${value.slice(-4)}` : '********';
}

/**
 * What a reader sees: secrets masked, write-only fields omitted, the derived flag computed.
 * The result is a plain object, since write-only fields are removed from the typed document.
 */
export function settingsView(settings: GeneralSettings): Record<SettingsGroup, Record<string, unknown>> {
  const derived = deriveAiIntegration(settings);
  const view = {} as Record<SettingsGroup, Record<string, unknown>>;
  for (const [group, fields] of Object.entries(derived) as [SettingsGroup, Record<string, unknown>][]) {
    const copy: Record<string, unknown> = { ...fields };
    for (const name of SETTINGS_SECRET_FIELDS[group] ?? []) copy[name] = maskSecret(String(copy[name] ?? ''));
    for (const name of SETTINGS_WRITE_ONLY_FIELDS[group] ?? []) delete copy[name];
    view[group] = copy;
  }
  return view;
}
