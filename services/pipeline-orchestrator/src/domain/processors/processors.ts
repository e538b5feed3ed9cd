import {
  RESPONSE_SCHEMA_REFUSED,
  RESPONSE_SCHEMA_USE,
  responseSchemaNote,
  systemPrincipal,
  type Principal,
  type ProcessorCreate,
  type ProcessorKind,
  type ProcessorPatch,
  type ProcessorView,
  type PageStart,
} from '@pack/contracts';
import { ConflictError, NotFoundError, ValidationError, type FieldErrors } from '@pack/errors';
import { LOST_RACE, retryOnConflict } from '@pack/reliability';
import type { ActiveSlots } from './active-slots';
import type { Page, ProcessorRecord } from '../records/processor-records';
import type { DirectoryStore } from '../records/store';
import type { ProcessorStore } from './store';
import { processorEvent, type ProcessorChange } from './processor-events';

/** How often a change re-reads a processor that another change moved on meanwhile. */
const CHANGE_ATTEMPTS = 5;
/** Processors read per page when a deleted Service retires them. */
const RETIRE_PAGE = 500;

export interface ListFilter {
  service?: number;
  kind?: ProcessorKind;
}

/**
 * AI processors (DESIGN section 7): the owner of the processor's Service or an admin may see and
 * change one; to anyone else it does not exist (404). Services and models are known from the
 * catalog's and the llm-gateway's events (DirectoryStore), never from their databases.
 */
export class Processors {
  constructor(
    private readonly store: ProcessorStore,
    private readonly directory: DirectoryStore,
    private readonly slots: ActiveSlots,
    /**
     * A processor of the Service changed and its event was written: the outbox relay is told (its
     * sweep would find the event anyway), and remembered lookups forget the Service.
     */
    private readonly eventsWritten: (serviceId: number) => void = () => undefined,
  ) {}

  async create(principal: Principal, body: ProcessorCreate): Promise<ProcessorView> {
    await this.checkReferences(principal, { service: body.service, llm_model: body.llm_model });
    const id = await this.store.nextId();
    if (body.active) await this.slots.acquire(body.service, body.kind, id);
    const now = new Date();
    const record: ProcessorRecord = {
      _id: id,
      name: body.name,
      service_id: body.service,
      kind: body.kind,
      llm_model_id: body.llm_model,
      prompt: body.prompt,
      response_schema_json: body.response_schema === null ? null : JSON.stringify(body.response_schema),
      generative_ui: body.generative_ui,
      active: body.active,
      deleted: false,
      version: 1,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.store.insert(record, processorEvent('created', record));
    } catch (error) {
      if (body.active) await this.slots.release(body.service, body.kind, id);
      throw error;
    }
    this.eventsWritten(record.service_id);
    return view(record);
  }

  async list(
    principal: Principal,
    filter: ListFilter,
    limit: number,
    start: PageStart,
  ): Promise<Page<ProcessorView>> {
    const service_ids =
      principal.role === 'admin' ? undefined : await this.directory.serviceIdsOwnedBy(principal.id);
    const page = await this.store.list(
      { service_ids, service_id: filter.service, kind: filter.kind },
      limit,
      start,
    );
    return { count: page.count, items: page.items.map(view) };
  }

  async get(principal: Principal, id: number): Promise<ProcessorView> {
    return view(await this.visible(principal, id));
  }

  /**
   * Any subset of fields; last writer wins between concurrent edits, each applied to the version
   * it read so every change has its own event version. Activating (or moving an active processor
   * to another kind) takes the Service's slot for that kind first: 409 while another holds it.
   */
  async update(principal: Principal, id: number, patch: ProcessorPatch): Promise<ProcessorView> {
    return retryOnConflict(
      async () => {
        const current = await this.visible(principal, id);
        const kind = patch.kind ?? current.kind;
        const schema =
          patch.response_schema === undefined
            ? current.response_schema_json
            : patch.response_schema && JSON.stringify(patch.response_schema);
        if (schema !== null && RESPONSE_SCHEMA_USE[kind] === 'refused')
          throw invalid({ response_schema: [RESPONSE_SCHEMA_REFUSED] });
        if (patch.llm_model !== undefined && patch.llm_model !== current.llm_model_id)
          await this.checkReferences(principal, { llm_model: patch.llm_model });

        const next: ProcessorRecord = {
          ...current,
          ...(patch.name !== undefined && { name: patch.name }),
          ...(patch.llm_model !== undefined && { llm_model_id: patch.llm_model }),
          ...(patch.prompt !== undefined && { prompt: patch.prompt }),
          ...(patch.generative_ui !== undefined && { generative_ui: patch.generative_ui }),
          ...(patch.active !== undefined && { active: patch.active }),
          kind,
          response_schema_json: schema,
          version: current.version + 1,
          updated_at: new Date(),
        };
        const holds = current.active;
        const needs = next.active && (!holds || next.kind !== current.kind);
        if (needs) await this.slots.acquire(next.service_id, next.kind, id);
        const change: ProcessorChange = next.active !== current.active ? 'activated' : 'updated';
        const updated = await this.store.update(
          id,
          current.version,
          changed(next),
          processorEvent(change, next),
        );
        if (!updated) {
          if (needs) await this.slots.release(next.service_id, next.kind, id);
          return LOST_RACE;
        }
        this.eventsWritten(next.service_id);
        if (holds && (!next.active || next.kind !== current.kind))
          await this.slots.release(current.service_id, current.kind, id);
        return view(updated);
      },
      {
        tries: CHANGE_ATTEMPTS,
        keptChanging: () =>
          new ConflictError(`AI processor ${id} is being changed by someone else; try again`),
      },
    );
  }

  /**
   * The Service was deleted (its catalog tombstone): its active processors are
   * deactivated (their events tell the llm-gateway the models are free), so no stage of its
   * pipelines starts again; admins can still read them. Repeating it changes nothing.
   */
  async retireService(serviceId: number): Promise<number> {
    let retired = 0;
    // Walks every page by key: a Service may hold more inactive processors than one page.
    for (let after: number | undefined; ;) {
      const page = await this.store.list({ service_id: serviceId }, RETIRE_PAGE, {
        offset: 0,
        ...(after === undefined ? {} : { after: [after] }),
      });
      const active = page.items.filter((processor) => processor.active && !processor.deleted);
      for (const processor of active)
        await this.update(systemPrincipal('pipeline-orchestrator'), processor._id, { active: false });
      retired += active.length;
      const last = page.items.at(-1);
      if (last === undefined || page.items.length < RETIRE_PAGE) return retired;
      after = last._id;
    }
  }

  /** Leaves a tombstone whose `deleted` event tells the llm-gateway the model is free. */
  async remove(principal: Principal, id: number): Promise<void> {
    return retryOnConflict(
      async () => {
        const current = await this.visible(principal, id);
        const next: ProcessorRecord = {
          ...current,
          active: false,
          deleted: true,
          version: current.version + 1,
          updated_at: new Date(),
        };
        if (!(await this.store.update(id, current.version, changed(next), processorEvent('deleted', next))))
          return LOST_RACE;
        this.eventsWritten(current.service_id);
        if (current.active) await this.slots.release(current.service_id, current.kind, id);
        return;
      },
      {
        tries: CHANGE_ATTEMPTS,
        keptChanging: () =>
          new ConflictError(`AI processor ${id} is being changed by someone else; try again`),
      },
    );
  }

  private async visible(principal: Principal, id: number): Promise<ProcessorRecord> {
    const record = await this.store.find(id);
    if (record && principal.role !== 'admin') {
      const service = await this.directory.service(record.service_id);
      if (service?.owner_id === principal.id) return record;
    } else if (record) return record;
    throw new NotFoundError(`no AI processor with id ${id}`);
  }

  /** The Service must exist and be the caller's (an admin's: any); the model must exist. 400 otherwise. */
  private async checkReferences(
    principal: Principal,
    refs: { service?: number; llm_model?: number },
  ): Promise<void> {
    const errors: FieldErrors = {};
    if (refs.service !== undefined) {
      const service = await this.directory.service(refs.service);
      if (!service || (principal.role !== 'admin' && service.owner_id !== principal.id))
        errors.service = [`no Service with id ${refs.service} that you own`];
    }
    if (refs.llm_model !== undefined && !(await this.directory.modelExists(refs.llm_model)))
      errors.llm_model = [`no LLM model with id ${refs.llm_model}`];
    if (Object.keys(errors).length > 0) throw invalid(errors);
  }
}

/** What an update writes: everything but the id and the creation time. */
function changed(next: ProcessorRecord): Partial<ProcessorRecord> {
  const { _id: _id, created_at: _created, ...set } = next;
  return set;
}

const invalid = (errors: FieldErrors) => new ValidationError('invalid AI processor', { errors });

function view(record: ProcessorRecord): ProcessorView {
  const schema = record.response_schema_json;
  return {
    id: record._id,
    name: record.name,
    service: record.service_id,
    kind: record.kind,
    llm_model: record.llm_model_id,
    prompt: record.prompt,
    response_schema: schema === null ? null : (JSON.parse(schema) as Record<string, unknown>),
    response_schema_note: responseSchemaNote(record.kind, schema !== null),
    generative_ui: record.generative_ui,
    active: record.active,
    created_at: record.created_at.toISOString(),
    updated_at: record.updated_at.toISOString(),
  };
}
