import { mongo, type Connection } from 'mongoose';
import type { Envelope, Principal, SettingsGroup, PageStart } from '@pack/contracts';
import { findPage, OUTBOX_PENDING_FIELD, outboxFields } from '@pack/db';
import type {
  AuditEntry,
  FieldChange,
  SettingsAction,
  SettingsVersion,
  StoredGroups,
  VersionRecord,
} from '../domain/model';
import type { SettingsStore } from '../domain/store';

export const SETTINGS_COLLECTION = 'general_settings';
/** Versions older than this many keep their audit record but drop their settings snapshot. */
export const SNAPSHOTS_KEPT = 10;

/**
 * One document per settings version, `_id` = version number, written by a single insert and
 * never updated by a writer (see docs/decisions/0004-settings-storage.md: FerretDB v1 updates
 * are read-modify-write of the whole document, so concurrent updates of one document lose
 * writes; an insert on a unique `_id` is atomic). The insert carries the snapshot, the audit
 * record and the settings.changed event (outbox), so none of them exists without the others.
 */
interface VersionDocument {
  _id: number;
  groups?: StoredGroups;
  at: Date;
  actor: Principal;
  action: SettingsAction;
  changed_groups: SettingsGroup[];
  changes: FieldChange[];
  _outbox?: Envelope[];
  _outbox_pending?: boolean;
}

export class SettingsRepository implements SettingsStore {
  private readonly versions;

  constructor(connection: Connection) {
    this.versions = connection.collection<VersionDocument>(SETTINGS_COLLECTION);
  }

  /** The outbox relay looks up pending events by this flag. */
  async ensureIndexes(): Promise<void> {
    await this.versions.createIndex({ [OUTBOX_PENDING_FIELD]: 1 });
  }

  async latest(): Promise<SettingsVersion> {
    const newest = await this.versions.findOne({}, { sort: { _id: -1 }, projection: { groups: 1 } });
    if (!newest) return { version: 0, groups: {} };
    if (!newest.groups) throw new Error(`settings version ${newest._id} has lost its snapshot`);
    return { version: newest._id, groups: newest.groups };
  }

  async append(record: VersionRecord): Promise<boolean> {
    const { id, username, role } = record.actor;
    try {
      await this.versions.insertOne({
        _id: record.version,
        groups: record.groups,
        at: record.at,
        actor: { id, username, role },
        action: record.action,
        changed_groups: record.changedGroups,
        changes: record.changes,
        ...outboxFields(...(record.event ? [record.event] : [])),
      });
      return true;
    } catch (error) {
      if (error instanceof mongo.MongoServerError && error.code === 11000) return false;
      throw error;
    }
  }

  async history(limit: number, start: PageStart): Promise<{ count: number; items: AuditEntry[] }> {
    const { count, items: documents } = await findPage(
      this.versions,
      {},
      {
        sort: { _id: -1 },
        limit,
        ...start,
        projection: { groups: 0, _outbox: 0, [OUTBOX_PENDING_FIELD]: 0 },
      },
    );
    return {
      count,
      items: documents.map((document) => ({
        version: document._id,
        at: document.at,
        actor: document.actor,
        action: document.action,
        changedGroups: document.changed_groups,
        changes: document.changes,
      })),
    };
  }

  /** Drops the snapshots of old versions (their audit records stay); relayed versions only. */
  async pruneSnapshots(latest: number): Promise<void> {
    await this.versions.updateMany(
      { _id: { $lte: latest - SNAPSHOTS_KEPT }, groups: { $exists: true }, [OUTBOX_PENDING_FIELD]: false },
      { $unset: { groups: '' } },
    );
  }
}
