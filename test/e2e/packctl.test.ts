/**
 * The operator CLI (`pnpm packctl`) against a running stack. A few command lines run as an
 * operator runs them, in a process of their own (its exit status, what it wrote); the others run
 * the same main() in this process, which answers the same status and lines without a process
 * start each (the suite's cost was mostly those starts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import amqp from 'amqplib';
import { createEnvelope, events } from '@pack/contracts';
import {
  call,
  outboxDrained,
  seededSecret,
  spawnEntryPoint,
  startFakeOpenAi,
  uniqueName,
  waitFor,
} from '@pack/testkit';
import { main } from '../../packages/packctl/src/main';
import { startStack, type Stack } from '../stack';
import * as kept from './backup-records';

const CLI = 'packages/packctl/src/main.ts';

describe('packctl', () => {
  let stack: Stack;
  let queue: string;
  const amqpUrl = process.env.AMQP_URL!;
  const env = (extra: Record<string, string> = {}) => ({
    PACK_GATEWAY_URL: stack.gateway,
    PACK_ADMIN_TOKEN: stack.adminToken,
    AMQP_URL: amqpUrl,
    MONGO_URL: process.env.MONGO_URL!,
    ...extra,
  });
  const serviceArgs = () =>
    stack.services.flatMap((service) => ['--service', `${service.definition.name}=${service.metricsUrl}`]);
  /** A run's status, and its standard error when it failed: a failure then says why. */
  const outcome = (run: { status: number | null; stderr: string }) => ({
    status: run.status,
    stderr: run.status === 0 ? '' : run.stderr,
  });
  const SUCCEEDED = { status: 0, stderr: '' };
  /** The command line as its own process, as an operator runs it. */
  const packctlProcess = (args: string[], extra?: Record<string, string>) =>
    spawnEntryPoint(CLI, args, env(extra));
  /** The same command line run by main() in this process, with exactly the environment the process would get. */
  async function packctl(args: string[], extra?: Record<string, string>) {
    let stdout = '';
    let stderr = '';
    const status = await main(args, env(extra), {
      out: (text) => (stdout += `${text}\n`),
      err: (text) => (stderr += `${text}\n`),
    });
    return { status, stdout, stderr };
  }

  async function withChannel<T>(use: (channel: amqp.ConfirmChannel) => Promise<T>): Promise<T> {
    const connection = await amqp.connect(amqpUrl);
    try {
      return await use(await connection.createConfirmChannel());
    } finally {
      await connection.close();
    }
  }
  const depth = (name: string) =>
    withChannel(async (channel) => (await channel.checkQueue(name)).messageCount);

  beforeAll(async () => {
    stack = await startStack();
    queue = `${stack.brokerNamespace}.catalog.validation-decisions`;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers --help on every command with exit 0, and a usage error with 64', async () => {
    const commands = [
      [],
      ['token'],
      ['token', 'create'],
      ['token', 'list'],
      ['token', 'revoke'],
      ['health'],
      ['dlq', 'list'],
      ['dlq', 'replay'],
      ['backup'],
      ['restore'],
    ];
    for (const command of commands) {
      const result = await packctl([...command, '--help']);
      expect({ command, status: result.status }).toEqual({ command, status: 0 });
      expect(result.stdout).toContain(`packctl ${command.join(' ')}`.trim());
    }
    expect((await packctlProcess(['frobnicate'])).status).toBe(64);
    expect((await packctl(['token', 'revoke'])).status).toBe(64);
    expect((await packctl(['health', '--no-such-option'])).status).toBe(64);
  });

  it('creates a user and token, lists it, and revokes it: the gateway then refuses the token', async () => {
    const username = uniqueName('ops');
    const created = await packctlProcess(['token', 'create', username, 'service_owner']);
    expect(created.status).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^pack_/);
    expect((await call(stack.gateway, 'GET', '/v1/core/general_settings/', { token })).status).toBe(200);

    const listed = await packctl(['token', 'list', '--json']);
    expect(listed.status).toBe(0);
    const entry = (
      JSON.parse(listed.stdout) as { results: { id: number; user: { username: string } }[] }
    ).results.find((t) => t.user.username === username);
    expect(entry).toBeDefined();
    const table = await packctl(['token', 'list']);
    expect(table.stdout).toMatch(new RegExp(`^${entry!.id}\\s+\\S+\\s+${username}\\s+service_owner`, 'm'));

    const revoked = await packctl(['token', 'revoke', String(entry!.id)]);
    expect({ status: revoked.status, out: revoked.stdout.trim() }).toEqual({
      status: 0,
      out: `token ${entry!.id} revoked`,
    });
    await waitFor(
      async () => (await call(stack.gateway, 'GET', '/v1/core/general_settings/', { token })).status === 401,
      { what: 'the revoked token to be refused' },
    );
  });

  it('fails with a message, exit 1, on a refused request or without an admin token', async () => {
    const badRole = await packctlProcess(['token', 'create', uniqueName('ops'), 'emperor']);
    expect(badRole.status).toBe(1);
    expect(badRole.stderr).toContain('role');
    const unknown = await packctl(['token', 'revoke', '999999']);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('404');
    const anonymous = await packctl(['token', 'list'], { PACK_ADMIN_TOKEN: '' });
    expect(anonymous.status).toBe(1);
    expect(anonymous.stderr).toContain('PACK_ADMIN_TOKEN');
  });

  it('reports every service ready and the queues, then unhealthy with dead letters; lists and replays them', async () => {
    const healthy = await packctl(['health', ...serviceArgs()]);
    expect({ status: healthy.status, verdict: healthy.stdout.trim().split('\n').pop() }).toEqual({
      status: 0,
      verdict: 'healthy',
    });
    for (const service of stack.services)
      // Services that read general settings list that check first.
      expect(healthy.stdout).toMatch(
        new RegExp(`^${service.definition.name}\\s+yes\\s+(settings ok, )?database ok`, 'm'),
      );
    expect(healthy.stdout).toMatch(new RegExp(`^${queue.replace(/\./g, '\\.')}\\s+0\\s+0\\s+0\\s+1$`, 'm'));

    // Two dead letters: one the consumer refused (not JSON), one valid event parked there (as after an outage).
    const parked = createEnvelope(
      events.changeInstanceValidationDecided,
      { change_instance_id: 987654, decision: 'approve', reasons: [] },
      { source: 'test', correlationId: 'ops-test' },
    );
    await withChannel(async (channel) => {
      channel.sendToQueue(queue, Buffer.from('not json'), { persistent: true });
      channel.sendToQueue(`${queue}.dlq`, Buffer.from(JSON.stringify(parked)), {
        persistent: true,
        messageId: parked.id,
        type: parked.type,
      });
      await channel.waitForConfirms();
    });
    await waitFor(async () => (await depth(`${queue}.dlq`)) === 2, { what: 'two dead letters' });

    const unhealthy = await packctl(['health', ...serviceArgs()]);
    expect(unhealthy.status).toBe(1);
    expect(unhealthy.stdout).toContain(`UNHEALTHY: ${queue} has 2 dead letters`);

    const listed = await packctl(['dlq', 'list', queue]);
    expect(listed.status).toBe(0);
    expect(listed.stdout).toContain(parked.id);
    expect(listed.stdout).toContain(events.changeInstanceValidationDecided.type);
    expect(listed.stdout).toContain('not json');
    expect(await depth(`${queue}.dlq`)).toBe(2); // listing takes nothing away

    const replayed = await packctl(['dlq', 'replay', `${queue}.dlq`]);
    expect({ status: replayed.status, out: replayed.stdout.trim() }).toEqual({
      status: 0,
      out: `replayed 2 message(s) from ${queue}.dlq to ${queue}`,
    });
    // The valid event is handled now; the unparseable one is dead-lettered again.
    await waitFor(async () => (await depth(queue)) === 0 && (await depth(`${queue}.dlq`)) === 1, {
      what: 'the replayed messages to be consumed',
    });
    const after = await packctl(['dlq', 'list', queue]);
    expect(after.stdout).not.toContain(parked.id);
    expect(after.stdout).toContain('not json');
  });

  it('reports a service that does not answer, and a queue that does not exist, with exit 1', async () => {
    const down = await packctl(['health', '--service', 'ghost=http://127.0.0.1:1']);
    expect(down.status).toBe(1);
    expect(down.stdout).toMatch(/^ghost\s+NO\s+unreachable/m);
    const missing = await packctl(['dlq', 'list', 'pack.no-such-queue']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('no queue pack.no-such-queue');
  });

  it('"a backup and restore of the platform with a tested command": a new stack on the restored databases reads the same records, and the secrets still work', async () => {
    const apiKey = seededSecret('the backed-up model api_key', { prefix: 'sk-backup-' });
    const provider = await startFakeOpenAi({ apiKey });
    const receiver = await kept.startReceiver();
    const dir = await mkdtemp(path.join(tmpdir(), 'pack-backup-'));
    let restored: Stack | undefined;
    try {
      const records = await kept.makeRecords(stack, { url: provider.url, apiKey }, receiver.url);
      // A settled point, as with the services scaled to zero: the submission's webhook sent, every outbox empty.
      await waitFor(() => receiver.received[0], { what: 'the submission webhook' });
      for (const service of stack.services) await outboxDrained(service);
      const before = await kept.readRecords(stack, records);
      expect(Object.values(before).map((read) => read.status)).toEqual([200, 200, 200, 200]);

      const backedUp = await packctlProcess(['backup', '--out', dir, ...kept.databaseArgs(stack)]);
      expect(outcome(backedUp)).toEqual(SUCCEEDED);
      const mixed = await packctl(['backup', '--out', dir, ...kept.databaseArgs(stack)]);
      expect({ status: mixed.status, stderr: mixed.stderr }).toEqual({
        status: 1,
        stderr: `packctl: ${dir} is not empty: back up into a new or empty folder\n`,
      });
      const manifest = await kept.backupManifest(dir);
      expect(manifest.databases.map((d) => d.service)).toEqual(kept.SERVICES);
      const catalog = manifest.databases.find((d) => d.service === 'catalog')!.collections;
      expect(catalog.find((c) => c.name === 'services')).toMatchObject({ count: 1 });

      const names = Object.fromEntries(
        kept.SERVICES.map((s) => [s, uniqueName(`t_restored_${s.replace(/-/g, '_')}`)]),
      );
      const restoreArgs = ['restore', '--from', dir, ...kept.databaseArgs(stack, names)];
      const restoredRun = await packctlProcess(restoreArgs);
      expect(outcome(restoredRun)).toEqual(SUCCEEDED);
      const again = await packctl(restoreArgs);
      expect(again.status).toBe(1);
      expect(again.stderr).toMatch(/refusing to restore into collections that hold documents: .*--drop/);
      const replaced = await packctl([...restoreArgs, '--drop']);
      expect(outcome(replaced)).toEqual(SUCCEEDED);

      restored = await startStack({
        env: Object.fromEntries(kept.SERVICES.map((s) => [s, { MONGO_DB: names[s]! }])),
      });
      expect(await kept.readRecords(restored, records)).toEqual(before);
      // The model's api_key decrypts: the fake provider refuses any other key.
      const tested = await restored.call('POST', `/v1/ai/llm_models/test_connection/${records.model}/`, {
        body: {},
      });
      expect({ status: tested.status, ok: tested.body.ok }).toEqual({ status: 200, ok: true });
      // The webhook signs with the secret it was created with.
      const sent = receiver.received.length;
      const fired = await restored.call(
        'POST',
        `/v1/external/serviceowner/webhooks/${records.webhook}/trigger/`,
        {
          token: records.owner,
          body: {},
        },
      );
      expect(fired.status).toBe(202);
      const request = await waitFor(() => receiver.received[sent], { what: 'the restored webhook' });
      expect(kept.signedWith(request, records.secret)).toBe(true);
    } finally {
      await restored?.stop();
      await provider.close();
      await receiver.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
