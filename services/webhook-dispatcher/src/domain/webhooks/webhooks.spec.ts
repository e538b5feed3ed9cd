import type { Principal } from '@pack/contracts';
import type { WebhookRecord } from '../model';
import type { ServiceStore, WebhookStore } from './store';
import { Webhooks, type SecretCodec } from './webhooks';

const owner: Principal = { id: 10, username: 'olivia', role: 'service_owner' };
const stored: WebhookRecord = {
  _id: 1,
  name: 'hook',
  description: '',
  service_id: 7,
  owner_id: owner.id,
  owner_name: owner.username,
  target_url: 'https://old.example.com/hook',
  authorization: '',
  secret: 'sealed-secret',
  change_instance_state: null,
  trigger_wait_time: 0,
  trigger_cooling_time: 0,
  enabled: true,
  disabled_reason: null,
  version: 3,
  created_at: new Date(0),
  updated_at: new Date(0),
};
const codec: SecretCodec = { seal: (_id, _field, plain) => `sealed:${plain}`, open: () => 'plain' };

/** A store whose record moved on to version 4 (an authorization was stored) after it was read. */
function racedStore() {
  const writes: string[] = [];
  const store = {
    find: async () => stored,
    update: async (id: number) => {
      writes.push(`update ${id}`);
      return { ...stored, version: 4 };
    },
    updateIf: async (id: number, version: number) => {
      writes.push(`updateIf ${id} at version ${version}`);
      return null;
    },
  } as unknown as WebhookStore;
  const webhooks = new Webhooks(store, {} as ServiceStore, codec, async () => null, {
    changed: async () => undefined,
  });
  return { webhooks, writes };
}

describe('Webhooks.update: a new target_url is written only over the version it checked', () => {
  it('answers 409 when the webhook changed between the check and the write, and writes nothing else', async () => {
    const { webhooks, writes } = racedStore();
    await expect(
      webhooks.update(owner, 1, { target_url: 'https://new.example.com/hook' }),
    ).rejects.toMatchObject({
      status: 409,
    });
    expect(writes).toEqual(['updateIf 1 at version 3']);
  });

  it('writes a change that keeps the URL without the version condition', async () => {
    const { webhooks, writes } = racedStore();
    await webhooks.update(owner, 1, { name: 'renamed', target_url: stored.target_url });
    expect(writes).toEqual(['update 1']);
  });
});
