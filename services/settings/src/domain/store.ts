import type { PageStart } from '@pack/contracts';
import type { AuditEntry, SettingsVersion, VersionRecord } from './model';

/** Where versions are kept; data/settings-repository.ts implements it. */
export interface SettingsStore {
  /** The newest version (version 0 with nothing stored before the first change). */
  latest(): Promise<SettingsVersion>;
  /** Stores a version unless that version number exists already (another writer won); true when stored. */
  append(record: VersionRecord): Promise<boolean>;
  history(limit: number, start: PageStart): Promise<{ count: number; items: AuditEntry[] }>;
}
