import { randomBytes } from 'node:crypto';
import type { Principal, WebhookCreate, WebhookPatch, WebhookView, PageStart } from '@pack/contracts';
import { ConflictError, NotFoundError, ValidationError } from '@pack/errors';
import { isMaskedSecret, maskSecret } from '@pack/secrets';
import type { Page, WebhookRecord } from '../model';
import type { ServiceStore, WebhookStore } from './store';
import type { WebhookChangeSink } from './webhook-lookup';

/** Encrypts and decrypts one secret field of one webhook; both are bound into the ciphertext. */
export interface SecretCodec {
  seal(webhookId: number, field: 'authorization' | 'secret', plaintext: string): string;
  /** null when the stored value cannot be decrypted (its key is gone). */
  open(webhookId: number, field: 'authorization' | 'secret', stored: string): string | null;
}

/** The reason a target URL is refused (syntax, or an address it resolves to), or null. */
export type TargetCheck = (url: string) => Promise<string | null>;

/**
 * A rotation this soon after the previous one is refused (409): concurrent rotations give one
 * winner, and no answer hands out a secret that another rotation replaced at once.
 */
export const ROTATION_GUARD_MS = 5_000;

/** Why a PATCH to a new target_url must carry the authorization (0014). */
export const AUTHORIZATION_AGAIN =
  'must be sent again when target_url changes: the stored one is never sent to a new URL ("" for none)';

/** A Standard Webhooks signing secret: `whsec_` and 24 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** Creating, reading, changing and deleting webhooks, each owner within their Services. */
export class Webhooks {
  constructor(
    private readonly store: WebhookStore,
    private readonly services: ServiceStore,
    private readonly codec: SecretCodec,
    private readonly checkTarget: TargetCheck,
    private readonly changes: WebhookChangeSink,
  ) {}

  async create(principal: Principal, input: WebhookCreate): Promise<WebhookView> {
    const service = await this.services.find(input.service);
    // One answer for a missing Service and another owner's: no existence oracle.
    if (!service || service.deleted || (principal.role !== 'admin' && service.owner_id !== principal.id))
      throw new ValidationError('unknown service', {
        errors: { service: [`no Service with id ${input.service} that you own`] },
      });
    await this.refuseTarget(input.target_url);
    const id = await this.store.nextId();
    const secret = newSigningSecret();
    const now = new Date();
    const record: WebhookRecord = {
      _id: id,
      name: input.name,
      description: input.description,
      service_id: service._id,
      owner_id: service.owner_id,
      owner_name: service.owner_name,
      target_url: input.target_url,
      authorization:
        input.authorization === '' ? '' : this.codec.seal(id, 'authorization', input.authorization),
      secret: this.codec.seal(id, 'secret', secret),
      change_instance_state: input.change_instance_state,
      trigger_wait_time: input.trigger_wait_time,
      trigger_cooling_time: input.trigger_cooling_time,
      enabled: input.enabled,
      disabled_reason: null,
      version: 1,
      created_at: now,
      updated_at: now,
    };
    await this.store.insert(record);
    await this.changed(record);
    return this.view(record, secret);
  }

  async list(principal: Principal, limit: number, start: PageStart): Promise<Page<WebhookView>> {
    const page = await this.store.list(principal.role === 'admin' ? null : principal.id, limit, start);
    return { count: page.count, items: page.items.map((record) => this.view(record)) };
  }

  async get(principal: Principal, id: number): Promise<WebhookView> {
    return this.view(await this.visible(principal, id));
  }

  /** The webhook if the caller may see it; 404 otherwise (no existence leak). */
  async visible(principal: Principal, id: number): Promise<WebhookRecord> {
    const record = await this.store.find(id);
    if (!record || (principal.role !== 'admin' && record.owner_id !== principal.id))
      throw new NotFoundError(`Webhook ${id} does not exist`);
    return record;
  }

  async update(principal: Principal, id: number, patch: WebhookPatch): Promise<WebhookView> {
    const record = await this.visible(principal, id);
    const moves = patch.target_url !== undefined && patch.target_url !== record.target_url;
    const authorizationSent = patch.authorization !== undefined && !isMaskedSecret(patch.authorization);
    // GitLab resets a hook's secret token when its URL changes: the stored authorization was
    // given for the old URL, and whoever may edit the webhook could read it at a URL of theirs.
    if (moves && record.authorization !== '' && !authorizationSent)
      throw new ValidationError('authorization required', {
        errors: { authorization: [AUTHORIZATION_AGAIN] },
      });
    if (patch.target_url !== undefined) await this.refuseTarget(patch.target_url);
    const set: Partial<WebhookRecord> = { updated_at: new Date() };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.target_url !== undefined) set.target_url = patch.target_url;
    if (patch.change_instance_state !== undefined) set.change_instance_state = patch.change_instance_state;
    if (patch.trigger_wait_time !== undefined) set.trigger_wait_time = patch.trigger_wait_time;
    if (patch.trigger_cooling_time !== undefined) set.trigger_cooling_time = patch.trigger_cooling_time;
    if (patch.enabled !== undefined) {
      // A deleted Service's webhooks stay disabled (services-projection.ts).
      if (patch.enabled && (await this.services.find(record.service_id))?.deleted)
        throw new ValidationError('the Service was deleted', {
          errors: { enabled: ["the webhook's Service was deleted: it stays disabled"] },
        });
      set.enabled = patch.enabled;
      if (patch.enabled) set.disabled_reason = null;
    }
    if (authorizationSent)
      set.authorization =
        patch.authorization === '' ? '' : this.codec.seal(id, 'authorization', patch.authorization!);
    // A move is written only over the version checked above: an authorization stored meanwhile
    // must not go along to the new URL.
    const updated = moves
      ? await this.store.updateIf(record._id, record.version, set)
      : await this.store.update(record._id, set);
    if (!updated) {
      if (moves && (await this.store.find(record._id)))
        throw new ConflictError(
          'the webhook changed while target_url was being changed; read it and try again',
        );
      throw new NotFoundError(`Webhook ${id} does not exist`);
    }
    await this.changed(updated);
    return this.view(updated);
  }

  /**
   * A new signing secret, shown in full this once; the old one stops signing at once. Written only
   * over the version read, and not within ROTATION_GUARD_MS of the previous rotation: of
   * concurrent rotations one wins, the others get 409 and no secret.
   */
  async rotateSecret(principal: Principal, id: number): Promise<WebhookView> {
    const record = await this.visible(principal, id);
    const now = new Date();
    const last = record.secret_rotated_at?.getTime();
    if (last !== undefined && now.getTime() - last < ROTATION_GUARD_MS) throw rotatedMomentsAgo();
    const secret = newSigningSecret();
    const updated = await this.store.updateIf(record._id, record.version, {
      secret: this.codec.seal(id, 'secret', secret),
      secret_rotated_at: now,
      updated_at: now,
    });
    if (!updated) {
      if (!(await this.store.find(record._id))) throw new NotFoundError(`Webhook ${id} does not exist`);
      throw new ConflictError(
        'the webhook changed while its secret was being rotated (another rotation or edit); nothing was rotated, read it and try again',
      );
    }
    await this.changed(updated);
    return this.view(updated, secret);
  }

  async remove(principal: Principal, id: number): Promise<void> {
    const record = await this.visible(principal, id);
    let removed = false;
    try {
      removed = await this.store.remove(record._id);
    } finally {
      // Also when another request removed it first, or the removal failed part way: a cache may
      // still hold it.
      await this.changes.changed({
        service_id: record.service_id,
        webhook_id: record._id,
        version: null,
        deleted: true,
      });
    }
    if (!removed) throw new NotFoundError(`Webhook ${id} does not exist`);
  }

  /** Every replica forgets its cached webhooks of the Service before the write is answered (0031). */
  private changed(record: WebhookRecord): Promise<void> {
    return this.changes.changed({
      service_id: record.service_id,
      webhook_id: record._id,
      version: record.version,
      deleted: false,
    });
  }

  private async refuseTarget(url: string): Promise<void> {
    const reason = await this.checkTarget(url);
    if (reason) throw new ValidationError('target refused', { errors: { target_url: [reason] } });
  }

  private view(record: WebhookRecord, freshSecret?: string): WebhookView {
    const authorization =
      record.authorization === ''
        ? ''
        : (this.codec.open(record._id, 'authorization', record.authorization) ?? '');
    const secret = freshSecret ?? this.codec.open(record._id, 'secret', record.secret) ?? '';
    return {
      id: record._id,
      name: record.name,
      description: record.description,
      service: record.service_id,
      owner: { id: record.owner_id, name: record.owner_name },
      target_url: record.target_url,
      authorization: maskSecret(authorization),
      change_instance_state: record.change_instance_state,
      trigger_wait_time: record.trigger_wait_time,
      trigger_cooling_time: record.trigger_cooling_time,
      enabled: record.enabled,
      disabled_reason: record.disabled_reason,
      secret: freshSecret ?? maskSecret(secret),
      created_at: record.created_at.toISOString(),
      updated_at: record.updated_at.toISOString(),
    };
  }
}

const rotatedMomentsAgo = () =>
  new ConflictError(
    `the signing secret was rotated less than ${ROTATION_GUARD_MS / 1000} seconds ago; the secret that rotation answered is the one in use`,
  );
