import { Schema, type Connection, type Model } from 'mongoose';
import { CHANGE_INSTANCE_STATES } from '@pack/contracts';
import { outboxSchemaFields } from '@pack/db';
import type {
  ChangeInstanceRecord,
  DeclarationRecord,
  ServiceItemRecord,
  ServiceOwnerRecord,
  ServiceRecord,
  TransitionRecord,
} from '../domain/model';

export const SERVICES = 'services';
export const SERVICE_ITEMS = 'service_items';
export const DECLARATIONS = 'declarations';
export const CHANGE_INSTANCES = 'change_instances';
export const TRANSITIONS = 'change_instance_transitions';
export const SERVICE_OWNERS = 'service_owners';
/**
 * Transition records carry the change-instance events: inserted once, afterwards written only by
 * the outbox relay (docs/decisions/0007). Services carry their own `changed` events in place:
 * the relay's `$pull` and a later update of the same Service are both single-document updates,
 * atomic on MongoDB and on our FerretDB build (0002, 0022).
 */
export const OUTBOX_COLLECTIONS = [TRANSITIONS, SERVICES] as const;

const options = { versionKey: false, strict: true } as const;

const serviceSchema = new Schema<ServiceRecord>(
  {
    _id: { type: Number, required: true },
    name: { type: String, required: true, unique: true },
    description: { type: String, default: '' },
    owner_id: { type: Number, required: true, index: true },
    owner_name: { type: String, required: true },
    auto_approval: { type: Boolean, default: false },
    allow_submit_submission_builder: { type: Boolean, default: null },
    version: { type: Number },
    created_at: { type: Date, required: true },
    updated_at: { type: Date, required: true },
    ...outboxSchemaFields,
  },
  { ...options, collection: SERVICES },
);

const serviceItemSchema = new Schema<ServiceItemRecord>(
  {
    _id: { type: Number, required: true },
    service_id: { type: Number, required: true },
    consumer_id: { type: Number, required: true },
    consumer_name: { type: String, required: true },
    created_at: { type: Date, required: true },
    // Kept by conditional updates after each submission and approval (decision 0005, amendment).
    latest_declaration_id: { type: Number },
    latest_submitted_at: { type: Date },
    latest_approval_seq: { type: Number },
    latest_approved_declaration_id: { type: Number },
    latest_approved_change_instance_id: { type: Number },
    latest_approved_at: { type: Date },
    pointers_version: { type: Number },
  },
  { ...options, collection: SERVICE_ITEMS },
);
serviceItemSchema.index({ consumer_id: 1, service_id: 1 }, { unique: true });
// The list's filters followed by its sort (newest first), as for Change Instances below.
serviceItemSchema.index({ service_id: 1, _id: -1 });
serviceItemSchema.index({ consumer_id: 1, _id: -1 });

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
    service_id: { type: Number, required: true },
    service_name: { type: String, required: true },
    service_owner_id: { type: Number, required: true },
    service_owner_name: { type: String, required: true },
    service_item_id: { type: Number, required: true },
    declaration_id: { type: Number, required: true },
    consumer_id: { type: Number, required: true },
    consumer_name: { type: String, required: true },
    state: { type: String, enum: CHANGE_INSTANCE_STATES, required: true },
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
// The list's filters, each followed by its sort (newest first): a filtered page reads only its
// matches, in order, on MongoDB and on our FerretDB (docs/decisions/0033). Each also serves
// lookups by its first field.
for (const field of ['state', 'service_id', 'service_item_id', 'consumer_id'] as const) {
  changeInstanceSchema.index({ [field]: 1, _id: -1 });
}

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
