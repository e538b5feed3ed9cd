import { loadConfig } from '@pack/config';
import type { Principal } from '@pack/contracts';
import { startService, type RunningService, type StartOptions } from '@pack/runtime';
import { call, dropDatabase, storedDocuments, testEnv, type CallResult } from '@pack/testkit';
import { settingsEnvSchema, settingsService, type SettingsConfig } from '../src/service';

export const SETTINGS = '/v1/core/general_settings/';
export const admin: Principal = { id: 1, username: 'alice', role: 'admin' };
export const owner: Principal = { id: 2, username: 'olivia', role: 'service_owner' };
export const consumer: Principal = { id: 3, username: 'carl', role: 'consumer' };

export type Env = Record<string, string>;

/** A settings version document as the database holds it. */
export interface StoredVersion {
  _id: number;
  groups?: Record<string, Record<string, unknown>>;
  action: string;
  changes: { field: string; secret?: boolean; old?: unknown; new?: unknown }[];
  _outbox: { data: Record<string, unknown> }[];
  _outbox_pending: boolean;
}

/** The settings service in this process, on its own database and broker namespace. */
export class SettingsHarness {
  private constructor(
    readonly service: RunningService<SettingsConfig>,
    readonly env: Env,
  ) {}

  static async start(overrides: Env = {}, options: StartOptions = {}): Promise<SettingsHarness> {
    const env = testEnv('settings', overrides);
    const service = await startService(settingsService, loadConfig(settingsEnvSchema, env), options);
    await service.started;
    return new SettingsHarness(service, env);
  }

  /** Another instance on the same database and namespace (a replica, or a restart with new env). */
  async startSibling(overrides: Env = {}, options: StartOptions = {}): Promise<SettingsHarness> {
    return SettingsHarness.start({ ...this.env, PORT: '0', ...overrides }, options);
  }

  get url(): string {
    return this.service.url;
  }

  call(
    principal: Principal | null,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<CallResult> {
    return call(this.url, method, path, { principal, body, headers });
  }

  get = (principal: Principal = admin) => this.call(principal, 'GET', SETTINGS);
  patch = (body: unknown, principal: Principal = admin) => this.call(principal, 'PATCH', SETTINGS, body);

  /** Every document of every collection of the service's database, as stored. */
  rawDatabase(): Promise<Record<string, Record<string, unknown>[]>> {
    return storedDocuments(this.service);
  }

  /** The settings versions, oldest first. */
  async versionDocuments(): Promise<StoredVersion[]> {
    return ((await this.rawDatabase()).general_settings ?? []) as unknown as StoredVersion[];
  }

  async stop(): Promise<void> {
    await this.service.stop();
  }

  async stopAndDrop(): Promise<void> {
    await this.service.stop();
    await dropDatabase(this.env.MONGO_URL!, this.env.MONGO_DB!);
  }
}
