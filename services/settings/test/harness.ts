import { loadConfig } from '@pack/config';
import type { Principal } from '@pack/contracts';
import { startService, type RunningService } from '@pack/runtime';
import {
  admin,
  startHarness,
  type CallResult,
  type Companions,
  type Harness,
  type HarnessOptions,
  type ServiceKind,
} from '@pack/testkit';
import { settingsEnvSchema, settingsService, type SettingsConfig } from '../src/service';

export { admin, consumer, owner } from '@pack/testkit';
export const SETTINGS = '/v1/core/general_settings/';

/** A settings version document as the database holds it. */
export interface StoredVersion {
  _id: number;
  groups?: Record<string, Record<string, unknown>>;
  action: string;
  changes: { field: string; secret?: boolean; old?: unknown; new?: unknown }[];
  _outbox: { data: Record<string, unknown> }[];
  _outbox_pending: boolean;
}

interface SettingsHelpers {
  get(principal?: Principal): Promise<CallResult>;
  patch(body: unknown, principal?: Principal): Promise<CallResult>;
  /** The settings versions, oldest first. */
  versionDocuments(): Promise<StoredVersion[]>;
}

/** The settings service in this process, on its own database and broker namespace. */
export const settingsKind: ServiceKind<
  RunningService<SettingsConfig>,
  Companions,
  SettingsHelpers,
  HarnessOptions
> = {
  name: 'settings',
  start: (env, options) => startService(settingsService, loadConfig(settingsEnvSchema, env), options),
  extend: (settings) => ({
    get: (principal = admin) => settings.as(principal, 'GET', SETTINGS),
    patch: (body, principal = admin) => settings.as(principal, 'PATCH', SETTINGS, body),
    versionDocuments: async () =>
      ((await settings.rawDatabase()).general_settings ?? []) as unknown as StoredVersion[],
  }),
};

export type SettingsHarness = Harness<
  RunningService<SettingsConfig>,
  Companions,
  SettingsHelpers,
  HarnessOptions
>;

export const startSettings = (options: HarnessOptions = {}): Promise<SettingsHarness> =>
  startHarness(settingsKind, options);
