import mongoose, { type Connection } from 'mongoose';
import { dropDatabase, uniqueName } from '@pack/testkit';
import {
  CallRepository,
  LLM_CALL_CLAIMS_COLLECTION,
  LLM_CALLS_COLLECTION,
} from '../src/data/call-repository';
import type { CallClaim, FinishedCall } from '../src/domain/calls/calls';

const claim = (id: string, owner = 'replica-a'): CallClaim => ({
  _id: id,
  state: 'claimed',
  owner,
  lease_until: new Date(Date.now() + 60_000),
  claimed_at: new Date(),
  model_id: 1,
  processor_id: null,
  pipeline_id: null,
});

const finished = (id: string): FinishedCall => ({
  state: 'finished',
  finished_at: new Date(),
  provider: 'vendor1',
  model_name: 'gpt-4o-mini',
  outcome: 'ok',
  input_tokens: 3,
  output_tokens: 2,
  raw_usage_json: null,
  input_price_per_1m_tokens: null,
  output_price_per_1m_tokens: null,
  cost: null,
  unpriced: false,
  latency_ms: 1,
  mode: 'none',
  attempts: 1,
  result: {
    request_id: id,
    llm_model_id: 1,
    processor_id: null,
    reply_to: null,
    ok: true,
    output: `reply to ${id}`,
    parsed_json: null,
    usage: { input_tokens: 3, output_tokens: 2 },
    cost: null,
    unpriced: false,
    mode: 'none',
    attempts: 1,
    latency_ms: 1,
    error: null,
  },
});

/** Claims and finishes sent together share commands; each still gets its own answer. */
describe('call records written together', () => {
  let connection: Connection;
  let dbName: string;
  let calls: CallRepository;

  beforeAll(async () => {
    dbName = uniqueName('t_llm_calls');
    connection = await mongoose.createConnection(process.env.MONGO_URL!, { dbName }).asPromise();
    calls = new CallRepository(connection);
  });
  afterAll(async () => {
    await connection.close();
    await dropDatabase(process.env.MONGO_URL!, dbName);
  });

  it('tells each of many concurrent claims whether it won, duplicates among them included', async () => {
    await calls.insertClaim(claim('taken-before', 'replica-b'));
    const ids = ['c1', 'c2', 'taken-before', 'c3', 'c2', 'c4'];

    const won = await Promise.all(ids.map((id) => calls.insertClaim(claim(id))));

    expect(won).toEqual([true, true, false, true, false, true]);
    const stored = await connection.collection(LLM_CALL_CLAIMS_COLLECTION).find().sort({ _id: 1 }).toArray();
    expect(stored.map((record) => [record._id, record.owner])).toEqual([
      ['c1', 'replica-a'],
      ['c2', 'replica-a'],
      ['c3', 'replica-a'],
      ['c4', 'replica-a'],
      ['taken-before', 'replica-b'],
    ]);
  });

  it('keeps the first finish of each request id, among many concurrent finishes', async () => {
    const ids = ['f1', 'f2', 'f3', 'f4', 'f5'];
    await Promise.all(ids.map((id) => calls.insertClaim(claim(id))));
    // Another replica took f2 and f4 over after the lease ran out, and finished them first.
    for (const id of ['f2', 'f4']) {
      await calls.takeOver(id, new Date(Date.now() + 120_000), 'replica-b', new Date(Date.now() + 180_000));
      expect(await calls.finish(claim(id, 'replica-b'), finished(id))).toBe(true);
    }

    const done = await Promise.all(ids.map((id) => calls.finish(claim(id), finished(id))));

    expect(done).toEqual([true, false, true, false, true]);
    const records = await Promise.all(ids.map((id) => calls.find(id)));
    expect(records.map((record) => [record?.state, record?.owner])).toEqual([
      ['finished', 'replica-a'],
      ['finished', 'replica-b'],
      ['finished', 'replica-a'],
      ['finished', 'replica-b'],
      ['finished', 'replica-a'],
    ]);
  });

  it('"RECORD_LINGER_MS": finishes one after another within the linger share one insert, each with its answer', async () => {
    const monitored = await mongoose
      .createConnection(process.env.MONGO_URL!, { dbName, monitorCommands: true })
      .asPromise();
    try {
      let inserts = 0;
      monitored.getClient().on('commandStarted', (event) => {
        if (event.commandName === 'insert' && event.command.insert === LLM_CALLS_COLLECTION) inserts += 1;
      });
      const lingering = new CallRepository(monitored, 40);
      const ids = ['l1', 'l2', 'l3'];
      await Promise.all(ids.map((id) => calls.insertClaim(claim(id))));
      expect(await calls.finish(claim('l2'), finished('l2'))).toBe(true); // finished before, elsewhere
      const done = await Promise.all(
        ids.map(async (id, i) => {
          await new Promise((resolve) => setTimeout(resolve, i * 8));
          return lingering.finish(claim(id), finished(id));
        }),
      );
      expect(done).toEqual([true, false, true]);
      expect(inserts).toBe(1);
      expect((await calls.find('l3'))?.state).toBe('finished');
    } finally {
      await monitored.close();
    }
  });

  it('claims and finishes handed in during one event-loop turn share one insert each', async () => {
    const monitored = await mongoose
      .createConnection(process.env.MONGO_URL!, { dbName, monitorCommands: true })
      .asPromise();
    try {
      const inserts: Record<string, number[]> = {};
      monitored.getClient().on('commandStarted', (event) => {
        if (event.commandName !== 'insert') return;
        const collection = event.command.insert as string;
        (inserts[collection] ??= []).push((event.command.documents as unknown[]).length);
      });
      // No linger: what shares a write is what arrived in the same turn (deliveries read together).
      const together = new CallRepository(monitored);
      const ids = ['t1', 't2', 't3', 't4'];

      const won = await Promise.all(ids.map((id) => together.insertClaim(claim(id))));
      const done = await Promise.all(ids.map((id) => together.finish(claim(id), finished(id))));

      expect([won, done]).toEqual([ids.map(() => true), ids.map(() => true)]);
      expect(inserts).toEqual({ [LLM_CALL_CLAIMS_COLLECTION]: [4], [LLM_CALLS_COLLECTION]: [4] });
    } finally {
      await monitored.close();
    }
  });

  it('finds a claim until its call is finished', async () => {
    await calls.insertClaim(claim('pending'));
    expect(await calls.find('pending')).toMatchObject({ state: 'claimed', owner: 'replica-a' });
    expect(await calls.find('never-seen')).toBeNull();
  });
});
