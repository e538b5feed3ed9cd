import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultGeneralSettings, events, type GeneralSettings } from '@pack/contracts';
import { publishEvent } from './events';

/**
 * Stands in for the settings service: serves a settings document the test controls and, on
 * change, publishes settings.changed the way the real one does.
 */
export class FakeSettings {
  document: GeneralSettings = defaultGeneralSettings();
  version = 1;
  private server?: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('x-settings-version', String(this.version));
      res.end(JSON.stringify(this.document));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Changes the document and announces it on a broker namespace (services there refetch it). */
  async change(
    amqpUrl: string,
    namespace: string,
    change: (settings: GeneralSettings) => void,
  ): Promise<void> {
    change(this.document);
    this.version += 1;
    await publishEvent(amqpUrl, namespace, events.settingsChanged, {
      groups: ['all'],
      version: this.version,
      changed_by: 1,
    });
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
