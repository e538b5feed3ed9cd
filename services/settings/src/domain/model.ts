import type { Envelope, Principal, SettingsGroup } from '@pack/contracts';

/**
 * The settings as stored: per group, only the fields an administrator has set (the rest take
 * their defaults, so a new default reaches every installation that never chose a value).
 * Secret fields hold encrypted values, JSON fields hold JSON text.
 */
export type StoredGroups = Partial<Record<SettingsGroup, Record<string, unknown>>>;

export type SettingsAction = 'update' | 'generate_ui_schema' | 'reencrypt';

/** One changed field, as the audit log shows it: never a secret's value. */
export interface FieldChange {
  /** `group.field` */
  field: string;
  secret?: true;
  old?: unknown;
  new?: unknown;
}

/** A version of the settings: the state after one change, with who made it and why. */
export interface SettingsVersion {
  version: number;
  groups: StoredGroups;
}

export interface VersionRecord extends SettingsVersion {
  at: Date;
  actor: Principal;
  action: SettingsAction;
  changedGroups: SettingsGroup[];
  changes: FieldChange[];
  /** The settings.changed event, written with the version (outbox). */
  event?: Envelope;
}

export type AuditEntry = Omit<VersionRecord, 'groups' | 'event'>;

/** Encrypts and decrypts one secret field; the field is bound into the ciphertext. */
export interface SecretCodec {
  seal(group: SettingsGroup, field: string, plaintext: string): string;
  /** The plaintext, or null when the stored value cannot be decrypted (its key is gone). */
  open(group: SettingsGroup, field: string, stored: string): string | null;
  /** True when the stored value should be encrypted again (retired key, or not encrypted). */
  needsReseal(stored: string): boolean;
}
