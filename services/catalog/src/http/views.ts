import { z } from 'zod';
import { changeInstanceStateSchema, parseExactJson } from '@pack/contracts';
import type { ChangeInstanceDetail } from '../domain/change-instances/change-instance-queries';
import type {
  ChangeInstanceRecord,
  DeclarationRecord,
  ItemPointers,
  ServiceItemRecord,
  ServiceOwnerRecord,
  ServiceRecord,
} from '../domain/model';
import type { ServiceOwnerView } from '../domain/services/service-owners';

const iso = (value: Date) => value.toISOString();
const isoOrNull = (value: Date | null | undefined) => (value ? value.toISOString() : null);
const userRef = z.object({ id: z.number().int(), name: z.string() });

export const serviceView = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  owner: userRef,
  auto_approval: z.boolean(),
  /** null: the Submission Builder setting default_allow_submit_submission_builder decides. */
  allow_submit_submission_builder: z.boolean().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export function toServiceView(record: ServiceRecord): z.infer<typeof serviceView> {
  return {
    id: record._id,
    name: record.name,
    description: record.description ?? '',
    owner: { id: record.owner_id, name: record.owner_name },
    auto_approval: record.auto_approval,
    allow_submit_submission_builder: record.allow_submit_submission_builder ?? null,
    created_at: iso(record.created_at),
    updated_at: iso(record.updated_at),
  };
}

export const serviceItemView = z.object({
  id: z.number().int(),
  service: z.object({ id: z.number().int(), name: z.string() }),
  consumer: userRef,
  latest_declaration_id: z.number().int().nullable(),
  latest_approved_declaration_id: z.number().int().nullable(),
  latest_approved_change_instance_id: z.number().int().nullable(),
  latest_approved_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export function toServiceItemView(
  record: ServiceItemRecord,
  service: ServiceRecord | undefined,
  pointers: ItemPointers | undefined,
): z.infer<typeof serviceItemView> {
  return {
    id: record._id,
    // A deleted Service keeps its id; its name is gone with it.
    service: { id: record.service_id, name: service?.name ?? '' },
    consumer: { id: record.consumer_id, name: record.consumer_name },
    latest_declaration_id: pointers?.latest_declaration_id ?? null,
    latest_approved_declaration_id: pointers?.latest_approved_declaration_id ?? null,
    latest_approved_change_instance_id: pointers?.latest_approved_change_instance_id ?? null,
    latest_approved_at: isoOrNull(pointers?.latest_approved_at),
    created_at: iso(record.created_at),
    updated_at: iso(pointers?.latest_submitted_at ?? record.created_at),
  };
}

const jsonObject = z
  .record(z.string(), z.unknown())
  .describe('The declaration as submitted: numbers exactly as sent, text for text');

/** A stored declaration's JSON text as a value, its numbers exact (stringifyExactJson writes them). */
export const declarationValue = (content: string) => parseExactJson(content) as Record<string, unknown>;

export const declarationView = z.object({
  id: z.number().int(),
  service: z.number().int(),
  service_item: z.number().int(),
  consumer: z.number().int(),
  declaration: jsonObject,
  created_at: z.string(),
});

export function toDeclarationView(record: DeclarationRecord): z.infer<typeof declarationView> {
  return {
    id: record._id,
    service: record.service_id,
    service_item: record.service_item_id,
    consumer: record.consumer_id,
    declaration: declarationValue(record.content),
    created_at: iso(record.created_at),
  };
}

export const changeInstanceView = z.object({
  id: z.number().int(),
  service: z.object({ id: z.number().int(), name: z.string(), owner: userRef }),
  service_item: z.number().int(),
  declaration_id: z.number().int(),
  consumer: userRef,
  state: changeInstanceStateSchema,
  reasons: z.array(z.string()),
  auto_approved: z.boolean(),
  approved_at: z.string().nullable(),
  validation: z
    .object({
      decision: z
        .enum(['approve', 'reject'])
        .nullable()
        .describe('The decision it applied; null: it gave none and the instance waits for its owner'),
      reason: z
        .string()
        .nullable()
        .describe(
          "Why there is no decision (the reply was not {decision, reasons}, or the call failed); null with a decision (its reasons are the transition's)",
        ),
      at: z.string(),
    })
    .nullable()
    .describe(
      "The Change Instance Validator's outcome: its decision, or none with the reason; null when no validator outcome is recorded",
    ),
  created_at: z.string(),
  updated_at: z.string(),
});

const historyView = z.object({
  from: changeInstanceStateSchema.nullable(),
  to: changeInstanceStateSchema,
  at: z.string(),
  by: z.object({
    kind: z.enum(['user', 'validator', 'auto_approval', 'pipeline']),
    user_id: z.number().int().nullable(),
    username: z.string().nullable(),
  }),
  reasons: z.array(z.string()),
});

export const changeInstanceDetailView = changeInstanceView.extend({
  declaration: jsonObject.nullable(),
  history: z.array(historyView),
});

/** The Service as it is now; as it was at submission once it has been deleted. */
export function toChangeInstanceView(
  record: ChangeInstanceRecord,
  service: ServiceRecord | undefined,
): z.infer<typeof changeInstanceView> {
  return {
    id: record._id,
    service: service
      ? { id: service._id, name: service.name, owner: { id: service.owner_id, name: service.owner_name } }
      : {
          id: record.service_id,
          name: record.service_name,
          owner: { id: record.service_owner_id, name: record.service_owner_name },
        },
    service_item: record.service_item_id,
    declaration_id: record.declaration_id,
    consumer: { id: record.consumer_id, name: record.consumer_name },
    state: record.state,
    reasons: record.reasons ?? [],
    auto_approved: record.auto_approved,
    approved_at: isoOrNull(record.approved_at),
    validation: record.validation
      ? {
          decision: record.validation.decision,
          reason: record.validation.reason,
          at: iso(record.validation.at),
        }
      : null,
    created_at: iso(record.created_at),
    updated_at: iso(record.updated_at),
  };
}

export function toChangeInstanceDetailView(
  detail: ChangeInstanceDetail,
): z.infer<typeof changeInstanceDetailView> {
  return {
    ...toChangeInstanceView(detail.instance, detail.service),
    declaration: detail.declaration ? declarationValue(detail.declaration.content) : null,
    history: detail.history.map((entry) => ({
      from: entry.from ?? null,
      to: entry.to,
      at: iso(entry.at),
      by: { kind: entry.by_kind, user_id: entry.by_user_id ?? null, username: entry.by_username ?? null },
      reasons: entry.reasons ?? [],
    })),
  };
}

export const serviceOwnerView = z.object({
  id: z.number().int(),
  username: z.string().nullable(),
  allow_service_creation: z.boolean(),
  /** allow_service_creation combined with the global Service Creator switch. */
  can_create_services: z.boolean(),
  created_at: z.string().nullable(),
  updated_at: z.string().nullable(),
});

export function toServiceOwnerView(view: ServiceOwnerView): z.infer<typeof serviceOwnerView> {
  return {
    id: view.id,
    username: view.username,
    allow_service_creation: view.allow_service_creation,
    can_create_services: view.can_create_services,
    created_at: isoOrNull(view.record?.created_at),
    updated_at: isoOrNull(view.record?.updated_at),
  };
}

export function toServiceOwnerListView(
  record: ServiceOwnerRecord,
  globalSwitch: boolean,
): z.infer<typeof serviceOwnerView> {
  return toServiceOwnerView({
    record,
    id: record._id,
    username: record.username,
    allow_service_creation: record.allow_service_creation,
    can_create_services: globalSwitch && record.allow_service_creation,
  });
}
