import { Schema, type Connection, type Model } from 'mongoose';
import { CHANGE_INSTANCE_STATES, type ChangeInstanceState } from '@pack/contracts';
import { outboxSchemaFields } from '@pack/db';

export const SERVICES = 'services';
export const SERVICE_ITEMS = 'service_items';
export const DECLARATIONS = 'declarations';
export const CHANGE_INSTANCES = 'change_instances';
export const SERVICE_OWNERS = 'service_owners';
/** Only change instances carry events (each change of an instance is one single-document write). */
export const OUTBOX_COLLECTIONS = [CHANGE_INSTANCES] as const;

export interface ServiceRecord {
  _id: number;
  name: string;
  description: string;
  owner_id: number;
  owner_name: string;
  auto_approval: boolean;
  created_at: Date;
  updated_at: Date;
}

/** One per consumer and Service; every submission of that consumer for that Service updates it. */
export interface ServiceItemRecord {
  _id: number;
  service_id: number;
  /** Copies of the Service's name and owner, so owner-scoped lists are one indexed equality query. */
  service_name: string;
  service_owner_id: number;
  consumer_id: number;
  consumer_name: string;
  latest_declaration_id: number | null;
  latest_approved_declaration_id: number | null;
  latest_approved_change_instance_id: number | null;
  latest_approved_at: Date | null;
  /** Sequence number of the approval behind latest_approved_*; a later approval always wins. */
  latest_approval_seq: number;
  created_at: Date;
  updated_at: Date;
}

export interface DeclarationRecord {
  _id: number;
  service_id: number;
  service_item_id: number;
  consumer_id: number;
  /** The declaration as JSON text (DESIGN section 2: user JSON is stored as text). */
  content: string;
  created_at: Date;
}

export interface HistoryEntry {
  from: ChangeInstanceState | null;
  to: ChangeInstanceState;
  at: Date;
  by_kind: 'user' | 'validator' | 'auto_approval';
  by_user_id: number | null;
  by_username: string | null;
  reasons: string[];
}

export interface ChangeInstanceRecord {
  _id: number;
  service_id: number;
  service_name: string;
  service_owner_id: number;
  service_owner_name: string;
  service_item_id: number;
  declaration_id: number;
  consumer_id: number;
  consumer_name: string;
  state: ChangeInstanceState;
  reasons: string[];
  auto_approved: boolean;
  /** 0 until approved; then the approval's sequence number. */
  approval_seq: number;
  approved_at: Date | null;
  history: HistoryEntry[];
  /**
   * Set by the write that creates or approves the instance, cleared once its Service Item shows
   * it; a sweep finishes what an interrupted request left (the same idea as the outbox).
   */
  item_sync_pending: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Per service owner: may they create Services (Service Creator settings, docs/decisions/0006). */
export interface ServiceOwnerRecord {
  _id: number;
  username: string;
  allow_service_creation: boolean;
  created_at: Date;
  updated_at: Date;
}

const options = { versionKey: false, strict: true } as const;

const serviceSchema = new Schema<ServiceRecord>(
  {
    _id: { type: Number, required: true },
    name: { type: String, required: true, unique: true },
    description: { type: String, default: '' },
    owner_id: { type: Number, required: true, index: true },
    owner_name: { type: String, required: true },
    auto_approval: { type: Boolean, default: false },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { ...options, collection: SERVICES },
);

const serviceItemSchema = new Schema<ServiceItemRecord>(
  {
    _id: { type: Number, required: true },
    service_id: { type: Number, required: true, index: true },
    service_name: { type: String, required: true },
    service_owner_id: { type: Number, required: true, index: true },
    consumer_id: { type: Number, required: true, index: true },
    consumer_name: { type: String, required: true },
    latest_declaration_id: { type: Number, default: null },
    latest_approved_declaration_id: { type: Number, default: null },
    latest_approved_change_instance_id: { type: Number, default: null },
    latest_approved_at: { type: Date, default: null },
    latest_approval_seq: { type: Number, default: 0 },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { ...options, collection: SERVICE_ITEMS },
);
serviceItemSchema.index({ consumer_id: 1, service_id: 1 }, { unique: true });

const declarationSchema = new Schema<DeclarationRecord>(
  {
    _id: { type: Number, required: true },
    service_id: { type: Number, required: true },
    service_item_id: { type: Number, required: true, index: true },
    consumer_id: { type: Number, required: true },
    content: { type: String, required: true },
    created_at: { type: Date, required: true },
  },
  { ...options, collection: DECLARATIONS },
);

const historySchema = new Schema<HistoryEntry>(
  {
    from: { type: String, default: null },
    to: { type: String, enum: CHANGE_INSTANCE_STATES, required: true },
    at: { type: Date, required: true },
    by_kind: { type: String, required: true },
    by_user_id: { type: Number, default: null },
    by_username: { type: String, default: null },
    reasons: { type: [String], default: [] },
  },
  { _id: false, versionKey: false },
);

const changeInstanceSchema = new Schema<ChangeInstanceRecord>(
  {
    _id: { type: Number, required: true },
    service_id: { type: Number, required: true, index: true },
    service_name: { type: String, required: true },
    service_owner_id: { type: Number, required: true, index: true },
    service_owner_name: { type: String, required: true },
    service_item_id: { type: Number, required: true, index: true },
    declaration_id: { type: Number, required: true },
    consumer_id: { type: Number, required: true, index: true },
    consumer_name: { type: String, required: true },
    state: { type: String, enum: CHANGE_INSTANCE_STATES, required: true, index: true },
    reasons: { type: [String], default: [] },
    auto_approved: { type: Boolean, default: false },
    approval_seq: { type: Number, default: 0 },
    approved_at: { type: Date, default: null },
    history: { type: [historySchema], default: [] },
    item_sync_pending: { type: Boolean, default: false, index: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
    ...outboxSchemaFields,
  },
  { ...options, collection: CHANGE_INSTANCES },
);

const serviceOwnerSchema = new Schema<ServiceOwnerRecord>(
  {
    _id: { type: Number, required: true },
    username: { type: String, required: true },
    allow_service_creation: { type: Boolean, required: true },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { ...options, collection: SERVICE_OWNERS },
);

export function catalogModels(connection: Connection) {
  return {
    services: connection.model('Service', serviceSchema) as Model<ServiceRecord>,
    serviceItems: connection.model('ServiceItem', serviceItemSchema) as Model<ServiceItemRecord>,
    declarations: connection.model('Declaration', declarationSchema) as Model<DeclarationRecord>,
    changeInstances: connection.model('ChangeInstance', changeInstanceSchema) as Model<ChangeInstanceRecord>,
    serviceOwners: connection.model('ServiceOwner', serviceOwnerSchema) as Model<ServiceOwnerRecord>,
  };
}
export type CatalogModels = ReturnType<typeof catalogModels>;

/** Creates the indexes (idempotent); run once the database is connected. */
export async function ensureIndexes(models: CatalogModels): Promise<void> {
  for (const model of Object.values(models)) await model.createIndexes();
}
