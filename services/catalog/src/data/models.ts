import { Schema, type Connection, type Model } from 'mongoose';
import { CHANGE_INSTANCE_STATES, type ChangeInstanceState } from '@pack/contracts';
import { outboxSchemaFields } from '@pack/db';

export const SERVICES = 'services';
export const SERVICE_ITEMS = 'service_items';
export const DECLARATIONS = 'declarations';
export const CHANGE_INSTANCES = 'change_instances';
export const TRANSITIONS = 'change_instance_transitions';
export const SERVICE_OWNERS = 'service_owners';
/**
 * Only transition records carry events. They are inserted once and afterwards written only by
 * the outbox relay, so no other write can race the relay on them (docs/decisions/0007).
 */
export const OUTBOX_COLLECTIONS = [TRANSITIONS] as const;

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

/**
 * One per consumer and Service, inserted at the consumer's first submission and never updated:
 * its latest and latest approved declaration are read from the transition records.
 */
export interface ServiceItemRecord {
  _id: number;
  service_id: number;
  consumer_id: number;
  consumer_name: string;
  created_at: Date;
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

/**
 * The current state of a Change Instance: a view of its transition records, rolled forward by
 * the request that made a transition and, should that request die half-way, by the catalog's
 * own consumer of the transition's event.
 */
export interface ChangeInstanceRecord {
  _id: number;
  service_id: number;
  /** The Service as it was at submission (shown if the Service is deleted later). */
  service_name: string;
  service_owner_id: number;
  service_owner_name: string;
  service_item_id: number;
  declaration_id: number;
  consumer_id: number;
  consumer_name: string;
  state: ChangeInstanceState;
  /** Number of the latest transition applied; transition 1 is the submission. */
  version: number;
  reasons: string[];
  auto_approved: boolean;
  /** 0 until approved; then the approval's sequence number (a later approval is a larger one). */
  approval_seq: number;
  approved_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type ActorKind = 'user' | 'validator' | 'auto_approval';

export interface TransitionStep {
  from: ChangeInstanceState | null;
  to: ChangeInstanceState;
  by_kind: ActorKind;
  by_user_id: number | null;
  by_username: string | null;
  reasons: string[];
}

/**
 * One change of a Change Instance, with the events it causes. `_id` is `<instance>:<version>`:
 * the unique key is what makes two concurrent changes from the same version impossible (on
 * FerretDB an update is read-then-write, but a unique insert is atomic).
 */
export interface TransitionRecord {
  _id: string;
  change_instance_id: number;
  version: number;
  service_id: number;
  service_item_id: number;
  declaration_id: number;
  /** Usually one step; a submission to an auto-approving Service is two (-> PENDING -> APPROVED). */
  steps: TransitionStep[];
  state: ChangeInstanceState;
  reasons: string[];
  approval_seq: number;
  approved_at: Date | null;
  /** Only on version 1: the instance as created, so it can be rebuilt if its insert never happened. */
  initial: ChangeInstanceRecord | null;
  created_at: Date;
}

/** Per service owner: may they create Services (Service Creator settings, docs/decisions/0008). */
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
    consumer_id: { type: Number, required: true, index: true },
    consumer_name: { type: String, required: true },
    created_at: { type: Date, required: true },
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

const changeInstanceSchema = new Schema<ChangeInstanceRecord>(
  {
    _id: { type: Number, required: true },
    service_id: { type: Number, required: true, index: true },
    service_name: { type: String, required: true },
    service_owner_id: { type: Number, required: true },
    service_owner_name: { type: String, required: true },
    service_item_id: { type: Number, required: true, index: true },
    declaration_id: { type: Number, required: true },
    consumer_id: { type: Number, required: true, index: true },
    consumer_name: { type: String, required: true },
    state: { type: String, enum: CHANGE_INSTANCE_STATES, required: true, index: true },
    version: { type: Number, required: true },
    reasons: { type: [String], default: [] },
    auto_approved: { type: Boolean, default: false },
    approval_seq: { type: Number, default: 0 },
    approved_at: { type: Date, default: null },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
  },
  { ...options, collection: CHANGE_INSTANCES },
);

const transitionSchema = new Schema<TransitionRecord>(
  {
    _id: { type: String, required: true },
    change_instance_id: { type: Number, required: true, index: true },
    version: { type: Number, required: true },
    service_id: { type: Number, required: true },
    service_item_id: { type: Number, required: true, index: true },
    declaration_id: { type: Number, required: true },
    steps: { type: [Object], default: [] },
    state: { type: String, required: true },
    reasons: { type: [String], default: [] },
    approval_seq: { type: Number, default: 0 },
    approved_at: { type: Date, default: null },
    initial: { type: Object, default: null },
    created_at: { type: Date, required: true },
    ...outboxSchemaFields,
  },
  { ...options, collection: TRANSITIONS },
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
    transitions: connection.model('ChangeInstanceTransition', transitionSchema) as Model<TransitionRecord>,
    serviceOwners: connection.model('ServiceOwner', serviceOwnerSchema) as Model<ServiceOwnerRecord>,
  };
}
export type CatalogModels = ReturnType<typeof catalogModels>;

/** Creates the indexes (idempotent); run once the database is connected. */
export async function ensureIndexes(models: CatalogModels): Promise<void> {
  for (const model of Object.values(models)) await model.createIndexes();
}
