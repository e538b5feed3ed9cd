import {
  DEFAULT_MAX_OUTPUT_TOKENS,
  defaultStructuredOutput,
  LLM_SECRET_FIELDS,
  type LlmModelCreate,
  type LlmModelPatch,
  type LlmModelView,
  type LlmProvider,
  type Role,
  type PageStart,
} from '@pack/contracts';
import { ConflictError, NotFoundError, ValidationError, type FieldErrors } from '@pack/errors';
import { isMaskedSecret } from '@pack/secrets';
import { LOST_RACE, retryOnConflict } from '@pack/reliability';
import {
  keepNestedSecrets,
  maskExtraData,
  openExtraData,
  sealExtraData,
  type PlainExtraData,
} from './extra-data';
import { checkFallbacks } from './fallback-checks';
import { checked, MASK_NOT_A_SECRET, PAYLOAD, refuseMasks, structuredOutputAfter } from './model-body-checks';
import { modelChangedEvent } from './model-events';
import { refuseStoredSecretsElsewhere, refuseTargets, type TargetCheck } from './model-targets';
import type { LlmModelRecord, Page, SecretCodec, WriteOutcome } from './model';
import type { LlmModelStore, ModelUsageStore } from './store';

/** A model with its secrets readable: never leaves the service. */
export type EffectiveModel = Omit<
  LlmModelRecord,
  '_id' | 'version' | 'created_at' | 'updated_at' | 'extra_data'
> & {
  id: number;
  extra_data: PlainExtraData;
  structured_output: NonNullable<LlmModelRecord['structured_output']>;
};
/** Each stale attempt means another edit succeeded; this many in a row is a storm, not a race. */
const STALE_ATTEMPTS = 10;
/** How many processor ids a 409 on deleting a used model names. */
const IN_USE_SHOWN = 5;

/**
 * LLM Model profiles (spec 2.1). Access is decided by the routes (DESIGN section 3: admins
 * write, service owners read); what a role sees of a secret is decided here.
 */
export class LlmModels {
  constructor(
    private readonly store: LlmModelStore,
    private readonly codec: SecretCodec,
    private readonly usage: ModelUsageStore,
    /** The address guard every URL of a model passes when it is saved or tested. */
    private readonly checkTarget: TargetCheck,
    /** Tells the outbox relay that events were written (it publishes them at once). */
    private readonly eventsWritten: () => void = () => undefined,
  ) {}

  async create(role: Role, body: LlmModelCreate): Promise<LlmModelView> {
    refuseMasks(body.provider, body.extra_data);
    await refuseTargets(this.checkTarget, body.extra_data);
    const id = await this.store.nextId();
    await checkFallbacks((model) => this.store.find(model), id, body.fallback_models);
    const now = new Date();
    const { extra_data, ...fields } = body;
    const record: LlmModelRecord = {
      _id: id,
      ...fields,
      extra_data: sealExtraData(this.codec, id, body.provider, extra_data),
      version: 1,
      created_at: now,
      updated_at: now,
    };
    await this.store.insert(record, modelChangedEvent(record, 1, false));
    this.eventsWritten();
    return this.view(record, role);
  }

  async list(role: Role, limit: number, start: PageStart): Promise<Page<LlmModelView>> {
    const page = await this.store.list(limit, start);
    return { count: page.count, items: page.items.map((record) => this.view(record, role)) };
  }

  async get(role: Role, id: number): Promise<LlmModelView> {
    return this.view(await this.found(id), role);
  }

  /**
   * Last writer wins between two concurrent edits of one model, as for any PATCH: an edit that
   * finds the model changed under it is computed again on the newer version.
   */
  async update(role: Role, id: number, patch: LlmModelPatch): Promise<LlmModelView> {
    const updated = await this.retryStale(id, async (current) => {
      const { extra_data: extraPatch, ...fields } = patch;
      const set: Partial<LlmModelRecord> = { ...fields, updated_at: new Date() };
      const provider = patch.provider ?? current.provider;
      set.structured_output = structuredOutputAfter(current, provider, patch);
      if (patch.fallback_models !== undefined)
        await checkFallbacks((model) => this.store.find(model), id, patch.fallback_models);
      if (provider !== current.provider || extraPatch !== undefined) {
        const plain = this.nextExtraData(current, provider, extraPatch);
        // The URLs sent (every URL of a new provider) pass the guard; the others passed it before.
        await refuseTargets(this.checkTarget, plain, provider === current.provider ? extraPatch : undefined);
        set.extra_data = sealExtraData(this.codec, id, provider, plain);
      }
      const event = modelChangedEvent({ ...current, ...set }, current.version + 1, false);
      return this.store.update(id, current.version, set, event);
    });
    return this.view(updated, role);
  }

  /**
   * The model as it would be after `patch`, secrets in plain text, for a connection test: the
   * same merge and checks as an update, nothing stored.
   */
  async withOverrides(id: number, patch: LlmModelPatch): Promise<EffectiveModel> {
    return this.effective(id, await this.found(id), patch);
  }

  /** The model as generation uses it (secrets readable), or null when there is none with this id. */
  async forGeneration(id: number): Promise<EffectiveModel | null> {
    try {
      return await this.withOverrides(id, {});
    } catch (error) {
      if (error instanceof NotFoundError) return null;
      throw error;
    }
  }

  /**
   * What a connection test talks to, and whether that is the stored model unchanged (then its
   * success says the stored model works again, and may close its breaker).
   */
  async testTarget(id: number, patch: LlmModelPatch): Promise<{ model: EffectiveModel; asStored: boolean }> {
    const current = await this.found(id);
    const model = this.effective(id, current, patch);
    const stored = this.effective(id, current, {});
    const sameProvider = model.provider === current.provider;
    await refuseTargets(
      this.checkTarget,
      model.extra_data,
      sameProvider ? (patch.extra_data ?? {}) : undefined,
    );
    if (sameProvider)
      refuseStoredSecretsElsewhere(model.provider, stored.extra_data, model.extra_data, patch.extra_data);
    const connection = (m: EffectiveModel) =>
      JSON.stringify([
        m.provider,
        m.model_name,
        m.timeout,
        m.prompt,
        m.max_output_tokens,
        m.structured_output,
        m.extra_data,
      ]);
    return { model, asStored: connection(model) === connection(stored) };
  }

  private effective(id: number, current: LlmModelRecord, patch: LlmModelPatch): EffectiveModel {
    const { extra_data: extraPatch, ...fields } = patch;
    const provider = patch.provider ?? current.provider;
    const extra_data =
      provider !== current.provider || extraPatch !== undefined
        ? this.nextExtraData(current, provider, extraPatch)
        : openExtraData(this.codec, id, provider, current.extra_data);
    // Spread, not `??`: a price overridden with null means unpriced for this test.
    const {
      _id: _id,
      version: _version,
      created_at: _created,
      updated_at: _updated,
      extra_data: _sealed,
      ...stored
    } = current;
    const structured_output = structuredOutputAfter(current, provider, patch);
    return { id, ...stored, ...fields, provider, extra_data, structured_output };
  }

  /**
   * A model that an active processor uses stays (409), so a running pipeline never loses its
   * model. What is active is known from the orchestrator's events, so a processor activated in
   * the same instant can still find its model gone; its generations then fail with a clear
   * "no such model" result (docs/decisions/0013). A model that another model names in its
   * fallback_models stays too (409 naming them; docs/decisions/0045).
   */
  async remove(id: number): Promise<void> {
    const users = await this.usage.activeProcessorsUsing(id, IN_USE_SHOWN + 1);
    if (users.length > 0) {
      const shown = users.slice(0, IN_USE_SHOWN).join(', ');
      const more = users.length > IN_USE_SHOWN ? ' and more' : '';
      throw new ConflictError(
        `LLM model ${id} is used by active AI processor(s) ${shown}${more}; deactivate them or move them to another model first`,
      );
    }
    const fallbackOf = await this.store.fallbackOf(id, IN_USE_SHOWN + 1);
    if (fallbackOf.length > 0) {
      const shown = fallbackOf.slice(0, IN_USE_SHOWN).join(', ');
      const more = fallbackOf.length > IN_USE_SHOWN ? ' and more' : '';
      throw new ConflictError(
        `LLM model ${id} is a fallback of LLM model(s) ${shown}${more}; remove it from their fallback_models first`,
      );
    }
    await this.retryStale(id, (current) =>
      this.store.remove(id, current.version, modelChangedEvent(current, current.version + 1, true)),
    );
  }

  /** Applies a change computed from the current version, again while another change wins the race. */
  private async retryStale<T>(
    id: number,
    change: (current: LlmModelRecord) => Promise<WriteOutcome<T>>,
  ): Promise<T> {
    return retryOnConflict(
      async () => {
        const outcome = await change(await this.found(id));
        if (outcome === 'gone') throw notFound(id);
        if (outcome === 'stale') return LOST_RACE;
        this.eventsWritten();
        return outcome.done;
      },
      {
        tries: STALE_ATTEMPTS,
        keptChanging: () => new ConflictError(`LLM model ${id} keeps changing under this request; try again`),
      },
    );
  }

  /**
   * The extra_data after a PATCH, checked against the provider. The same provider: the sent keys
   * are merged into the stored ones and a masked secret keeps the stored value. A new provider:
   * the sent extra_data is the whole of it.
   */
  private nextExtraData(
    current: LlmModelRecord,
    provider: LlmProvider,
    sent: Record<string, unknown> | undefined,
  ): PlainExtraData {
    if (provider !== current.provider) {
      if (sent === undefined)
        throw new ValidationError('a new provider needs its whole extra_data', {
          errors: { extra_data: [`required when the provider changes to ${provider}`] },
        });
      refuseMasks(provider, sent);
      return checked(provider, sent);
    }
    const stored = openExtraData(this.codec, current._id, provider, current.extra_data);
    const merged: PlainExtraData = { ...stored, ...sent };
    const errors: FieldErrors = {};
    for (const field of LLM_SECRET_FIELDS[provider]) {
      const value = sent?.[field];
      if (typeof value !== 'string' || !isMaskedSecret(value)) continue;
      if (typeof stored[field] === 'string') merged[field] = stored[field];
      else errors[`extra_data.${field}`] = ['the stored secret cannot be read; send the secret itself'];
    }
    if (sent && PAYLOAD in sent) {
      const missing: string[] = [];
      merged[PAYLOAD] = keepNestedSecrets(sent[PAYLOAD], stored[PAYLOAD], `extra_data.${PAYLOAD}`, missing);
      for (const path of missing) errors[path] = [MASK_NOT_A_SECRET];
    }
    if (Object.keys(errors).length > 0) throw new ValidationError('invalid extra_data', { errors });
    return checked(provider, merged);
  }

  private async found(id: number): Promise<LlmModelRecord> {
    const record = await this.store.find(id);
    if (!record) throw notFound(id);
    return record;
  }

  private view(record: LlmModelRecord, role: Role): LlmModelView {
    const { _id, extra_data, version: _version, created_at, updated_at, ...fields } = record;
    const plain = openExtraData(this.codec, _id, record.provider, extra_data);
    return {
      id: _id,
      ...fields,
      max_output_tokens: fields.max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
      structured_output: fields.structured_output ?? defaultStructuredOutput(record.provider),
      fallback_models: fields.fallback_models ?? [],
      extra_data: maskExtraData(record.provider, plain, role === 'admin'),
      created_at: created_at.toISOString(),
      updated_at: updated_at.toISOString(),
    };
  }
}

const notFound = (id: number) => new NotFoundError(`no LLM model with id ${id}`);
