import {
  buildGenUiCatalogSchema,
  deriveAiIntegration,
  type Envelope,
  type EventData,
  type events,
  type GeneralSettings,
  type GeneralSettingsPatch,
  type GeneralSettingsView,
  type Principal,
  type PageStart,
} from '@pack/contracts';
import { ConflictError } from '@pack/errors';
import { jittered, LOST_RACE, retryOnConflict } from '@pack/reliability';
import type { Logger } from '@pack/logging';
import { decodeSettings, type DecodedSettings } from './decode';
import type { AuditEntry, SecretCodec, SettingsAction, SettingsVersion, VersionRecord } from './model';
import { planPatch, planReencryption, type PlannedChange } from './plan';
import type { SettingsStore } from './store';
import { settingsView, viewFor } from './view';

export interface SettingsUseCasesOptions {
  store: SettingsStore;
  codec: SecretCodec;
  logger: Logger;
  newEvent: (data: EventData<typeof events.settingsChanged>) => Envelope;
  /** Called once a version is stored (the outbox relay publishes its event then). */
  committed: (version: number) => void;
  maxAttempts: number;
  /** How long a read is served from memory (0: never). */
  readCacheMs: number;
  now?: () => number;
}

export interface SettingsState {
  version: number;
  view: GeneralSettingsView;
  /** True when secrets show the bare mask only (every reader but an admin). */
  masked?: boolean;
}

/**
 * Reading and changing the general settings. A change is computed from the newest version and
 * stored as the next version number; when another writer took that number first, the change is
 * computed again from the newer version. Concurrent changes of different fields thus all
 * survive, and each change is validated against the state it actually applies to.
 */
export class GeneralSettingsUseCases {
  /** Every request reads the settings; they are decoded once per version and kept here. */
  private cached?: { state: SettingsState; at: number };
  private loading?: Promise<SettingsState>;

  constructor(private readonly options: SettingsUseCasesOptions) {}

  read(): Promise<SettingsState> {
    const now = (this.options.now ?? Date.now)();
    if (this.cached && now - this.cached.at < this.options.readCacheMs)
      return Promise.resolve(this.cached.state);
    // One load at a time: concurrent readers share it.
    this.loading ??= this.options.store
      .latest()
      .then((current) => {
        const state = { version: current.version, view: settingsView(this.decode(current)) };
        this.remember(state, now);
        return state;
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  /** The settings as `reader` may see them (view.ts: only admins see any character of a secret). */
  async readAs(reader: Principal): Promise<SettingsState> {
    const state = await this.read();
    const view = viewFor(reader.role, state.view);
    return view === state.view ? state : { ...state, view, masked: true };
  }

  /**
   * The newest settings with secrets in plaintext (write-only ones included), for the platform's
   * own services that use them (the gateway signs in and sends mail). Never cached here: it is
   * read rarely, and plaintext should not outlive the request that needed it.
   */
  async readPlaintext(): Promise<{ version: number; settings: GeneralSettings }> {
    const current = await this.options.store.latest();
    return { version: current.version, settings: deriveAiIntegration(this.decode(current).settings) };
  }

  /** A newer version exists (another replica's settings.changed): the next read loads it. */
  invalidate(version: number): void {
    if (this.cached && version > this.cached.state.version) this.cached = undefined;
  }

  private remember(state: SettingsState, at: number): void {
    if (this.cached && this.cached.state.version > state.version) return;
    this.cached = { state, at };
  }

  patch(actor: Principal, patch: GeneralSettingsPatch): Promise<SettingsState> {
    return this.change(actor, 'update', (current, decoded) =>
      planPatch(current, decoded, patch, this.options.codec),
    );
  }

  /** Generate Schema: the catalog schema built from the component registry replaces the stored one. */
  generateCatalogSchema(actor: Principal): Promise<SettingsState> {
    const schema = buildGenUiCatalogSchema();
    return this.change(actor, 'generate_ui_schema', (current, decoded) =>
      planPatch(
        current,
        decoded,
        { ai_integration: { generative_ui_catalog_schema: schema } },
        this.options.codec,
      ),
    );
  }

  /** Moves secrets onto the active key after a rotation; values do not change, so no event. */
  reencryptSecrets(actor: Principal): Promise<SettingsState> {
    return this.change(actor, 'reencrypt', (current) => planReencryption(current, this.options.codec));
  }

  audit(limit: number, start: PageStart): Promise<{ count: number; items: AuditEntry[] }> {
    return this.options.store.history(limit, start);
  }

  private decode(version: SettingsVersion): DecodedSettings {
    const decoded = decodeSettings(version.groups, this.options.codec);
    if (decoded.unreadable.size > 0 || decoded.invalid.size > 0) {
      this.options.logger.warn(
        { version: version.version, unreadable: [...decoded.unreadable], invalid: [...decoded.invalid] },
        'stored settings have undecryptable secrets or invalid values; they read as masked or default',
      );
    }
    return decoded;
  }

  private async change(
    actor: Principal,
    action: SettingsAction,
    plan: (current: SettingsVersion, decoded: DecodedSettings) => PlannedChange | null,
  ): Promise<SettingsState> {
    const { store, maxAttempts } = this.options;
    return retryOnConflict(
      async () => {
        const current = await store.latest();
        const decoded = this.decode(current);
        const planned = plan(current, decoded);
        if (!planned) return { version: current.version, view: settingsView(decoded) };
        const version = current.version + 1;
        const record: VersionRecord = {
          version,
          groups: planned.groups,
          at: new Date(),
          actor,
          action,
          changedGroups: planned.changedGroups,
          changes: planned.changes,
          event:
            planned.changedGroups.length > 0
              ? this.options.newEvent({ groups: planned.changedGroups, version, changed_by: actor.id })
              : undefined,
        };
        // Another writer stored this version first: decide again from the newer one.
        if (!(await store.append(record))) return LOST_RACE;
        this.options.committed(version);
        const state = { version, view: settingsView(this.decode(record)) };
        this.remember(state, (this.options.now ?? Date.now)());
        return state;
      },
      {
        tries: maxAttempts,
        // Back off a little (jittered) before recomputing, so many writers spread out.
        pauseMs: (attempt) => jittered(10 * Math.min(attempt, 5), 'full'),
        keptChanging: () => new ConflictError('the settings were changed concurrently too often; try again'),
      },
    );
  }
}
