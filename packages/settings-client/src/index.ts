import { request } from 'undici';
import { on, type ConsumerSpec } from '@pack/broker';
import {
  defaultGeneralSettings,
  events,
  generalSettingsSchema,
  systemPrincipal,
  type GeneralSettings,
} from '@pack/contracts';
import { principalHeaders } from '@pack/internal-auth';
import { ServiceUnavailableError } from '@pack/errors';
import type { Logger } from '@pack/logging';
import { waitFor } from '@pack/reliability';

export const GENERAL_SETTINGS_PATH = '/v1/core/general_settings/';
/**
 * The same document with secrets in plaintext, answered to services only (the gateway needs
 * BIND_PASSWORD, CLIENT_SECRET and EMAIL_HOST_PASSWORD to sign users in and send mail).
 */
export const GENERAL_SETTINGS_PLAINTEXT_PATH = '/v1/core/general_settings/plaintext/';

export interface SettingsCacheOptions {
  /** Base URL of the settings service, e.g. http://127.0.0.1:8082 */
  settingsUrl: string;
  internalSecret: string;
  /** Name of the service that holds the cache (names its queue and its principal). */
  service: string;
  logger: Logger;
  retryMs?: number;
  /**
   * Also revalidate every this many ms (a conditional GET, answered 304 while nothing changed);
   * 0 turns it off. Events reach every replica through a broadcast queue, but one that arrives
   * while the replica is disconnected from the broker, or whose refresh fails, is not
   * redelivered: the poll bounds how stale a cache can get then. Default 15 s.
   */
  pollMs?: number;
  /** GENERAL_SETTINGS_PLAINTEXT_PATH for a service that uses secret settings; masked otherwise. */
  path?: string;
}

/** Response header carrying the version a settings response reflects. */
export const SETTINGS_VERSION_HEADER = 'x-settings-version';

/**
 * The general settings as a service sees them (secrets masked, unless it reads the plaintext
 * path), refetched on every settings.changed event, so a change applies without a restart.
 * Until the first fetch succeeds `get()` answers the defaults, which may not be what an
 * administrator chose: a service acts on nothing before `whenLoaded()` resolves (its runtime's
 * `before` step waits for it) and its routes read `confirmed()`, which refuses with 503 meanwhile.
 */
export class SettingsCache {
  private current: GeneralSettings = defaultGeneralSettings();
  private currentVersion = -1;
  private etag?: string;
  private loaded = false;
  private poller?: NodeJS.Timeout;
  private stopped = false;
  /** Which start() the first-fetch wait belongs to: one of an earlier start stops. */
  private starts = 0;
  private readonly listeners = new Set<(settings: GeneralSettings) => void>();
  private markLoaded!: () => void;
  private readonly firstLoad = new Promise<void>((resolve) => {
    this.markLoaded = resolve;
  });

  constructor(private readonly options: SettingsCacheOptions) {}

  /** The settings held; the defaults before the first fetch (see `confirmed()`). */
  get(): GeneralSettings {
    return this.current;
  }

  /** The settings fetched from the settings service; 503 while none has been fetched yet. */
  confirmed(): GeneralSettings {
    if (!this.loaded)
      throw new ServiceUnavailableError(
        'the general settings are not loaded yet (the settings service has not answered); try again shortly',
      );
    return this.current;
  }

  /** Resolves once the first fetch succeeded (start() begins it). */
  whenLoaded(): Promise<void> {
    return this.firstLoad;
  }

  isLoaded(): boolean {
    return this.loaded;
  }

  /** The settings version the cache holds (-1 before the first fetch). */
  version(): number {
    return this.currentVersion;
  }

  onChange(listener: (settings: GeneralSettings) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** First fetch in the background, retrying until it succeeds. */
  start(): void {
    this.stopped = false;
    void this.refreshUntilLoaded();
    const pollMs = this.options.pollMs ?? 15_000;
    if (pollMs > 0) {
      this.poller = setInterval(() => {
        this.refresh().catch((error: unknown) =>
          this.options.logger.warn({ err: error }, 'settings revalidation failed'),
        );
      }, pollMs);
      this.poller.unref();
    }
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.poller);
  }

  /**
   * The runtime's start-up step that makes a service act on nothing before the first fetch: it
   * consumes, times and answers ready only once this resolves.
   */
  firstLoadStep(): { name: string; run: () => Promise<void>; cancel: () => void } {
    return {
      name: 'settings',
      run: async () => {
        this.start();
        await this.whenLoaded();
      },
      cancel: () => this.stop(),
    };
  }

  /** The queue that keeps this cache fresh; register it with the service's broker. */
  consumer(): ConsumerSpec {
    return {
      name: `${this.options.service}.settings-cache`,
      // Every replica keeps its own cache, so every replica must see every change.
      broadcast: true,
      handlers: [
        on(events.settingsChanged, async ({ version }) => {
          if (version <= this.currentVersion) return;
          await this.refresh();
        }),
      ],
    };
  }

  async refresh(): Promise<void> {
    const path = this.options.path ?? GENERAL_SETTINGS_PATH;
    const url = new URL(path, this.options.settingsUrl);
    const response = await request(url, {
      method: 'GET',
      headers: {
        ...principalHeaders(this.options.internalSecret, 'GET', path, systemPrincipal(this.options.service)),
        ...(this.loaded && this.etag ? { 'if-none-match': this.etag } : {}),
      },
      headersTimeout: 5000,
      bodyTimeout: 5000,
    });
    if (response.statusCode === 304) {
      await response.body.dump();
      return;
    }
    const body = (await response.body.json()) as Record<string, unknown>;
    if (response.statusCode !== 200) throw new Error(`settings service answered ${response.statusCode}`);
    const version = Number(response.headers[SETTINGS_VERSION_HEADER] ?? 0);
    const parsed = generalSettingsSchema.parse(body);
    // Two refreshes can overlap (an event and the poll): an older answer never replaces a newer one.
    if (this.loaded && version < this.currentVersion) return;
    this.current = parsed;
    this.currentVersion = version;
    const etag = response.headers.etag;
    this.etag = typeof etag === 'string' ? etag : undefined;
    this.loaded = true;
    this.markLoaded();
    for (const listener of this.listeners) listener(parsed);
  }

  private async refreshUntilLoaded(): Promise<void> {
    const start = ++this.starts;
    await waitFor(() => this.refresh(), {
      baseDelayMs: this.options.retryMs ?? 200,
      maxDelayMs: 5000,
      stopped: () => this.stopped || this.loaded || start !== this.starts,
      onWait: (error, _attempt, delay) =>
        this.options.logger.warn(
          { err: error, retry_in_ms: delay },
          'settings fetch failed; acting on nothing until it succeeds',
        ),
    });
  }
}
