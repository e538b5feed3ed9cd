import mongoose, { type Connection } from 'mongoose';
import { CEILINGS, dropDatabase, uniqueName } from '@pack/testkit';
import { RESPONSES, ResponseRepository } from '../src/data/response-repository';
import type { ResponseRecord } from '../src/domain/model';

// Tests that drive volume: the long ceiling for every test of the file.
jest.setTimeout(CEILINGS.longTest);

/** Fires a long life leaves behind: SCHEDULED ones due later (retries, rate-limited) and ones being sent. */
const NOT_DUE = 20_000;
const SENDING = 1_000;
const SLICE = 1_000;

/**
 * Every replica claims on every poll. The reads behind a claim are an equality on
 * `state`, sorted on the time field, limit 1 (answered in PostgreSQL from an index on our
 * FerretDB, docs/decisions/0033 amendment 3); whether that earliest one is due or its lease
 * expired is decided in the dispatcher. The responses are written straight into the collection.
 */
describe('"SCHEDULED: Request queued, waiting to be sent": claims among 20,000 fires not due', () => {
  let connection: Connection;
  let dbName: string;
  let responses: ResponseRepository;
  const now = Date.now();
  const at = (offsetMs: number) => new Date(now + offsetMs);

  function response(id: string, fields: Partial<ResponseRecord>): ResponseRecord {
    return {
      _id: id,
      webhook_id: 1,
      seq: 0,
      webhook_version: 1,
      state: 'SCHEDULED',
      mode: 'state_change',
      change_instance_id: null,
      body: {} as ResponseRecord['body'],
      event_at: at(-60_000),
      due_at: at(60_000),
      lease_until: null,
      lease_token: null,
      attempt_count: 0,
      attempts: [],
      status_code: null,
      response_body: null,
      response_truncated: false,
      resend_of: null,
      created_at: at(-60_000),
      updated_at: at(-60_000),
      ...fields,
    };
  }

  async function load(count: number, make: (i: number) => ResponseRecord): Promise<void> {
    for (let from = 0; from < count; from += SLICE) {
      const slice = Array.from({ length: Math.min(SLICE, count - from) }, (_, i) => make(from + i));
      await connection.collection<ResponseRecord>(RESPONSES).insertMany(slice);
    }
  }

  beforeAll(async () => {
    dbName = uniqueName('t_claim_scale');
    connection = await mongoose.createConnection(process.env.MONGO_URL!, { dbName }).asPromise();
    responses = new ResponseRepository(connection);
    await responses.ensureIndexes();
    // due from a second up to 6 hours from now: none is due yet
    await load(NOT_DUE, (i) => response(`later-${i}`, { seq: i, due_at: at(1_000 + i * 1_000) }));
    // being sent, leases running out from 30 s on
    await load(SENDING, (i) =>
      response(`sending-${i}`, {
        seq: NOT_DUE + i,
        state: 'WAITING_FOR_RESPONSE',
        due_at: at(-5_000),
        lease_until: at(30_000 + i),
        lease_token: 'alive',
      }),
    );
  });

  afterAll(async () => {
    await connection.close();
    await dropDatabase(process.env.MONGO_URL!, dbName);
  });

  const lease = () => at(120_000);

  it('claims nothing while no fire is due and no lease expired', async () => {
    expect(await responses.claim(new Date(now), lease(), 'poll-1')).toBeNull();
  });

  it('claims the due fires and the expired leases among them, the oldest due first, then nothing', async () => {
    await connection.collection<ResponseRecord>(RESPONSES).insertMany([
      response('due-second', { due_at: at(-3_000) }),
      response('due-fourth', { due_at: at(-1_000) }),
      response('due-first', { due_at: at(-4_000) }),
      // its replica died mid-delivery: sent at -2 s, lease gone at -500 ms
      response('expired-third', {
        state: 'WAITING_FOR_RESPONSE',
        due_at: at(-2_000),
        lease_until: at(-500),
        lease_token: 'dead',
      }),
    ]);

    const claimed: string[] = [];
    for (let poll = 0; poll < 6; poll++) {
      const record = await responses.claim(new Date(now), lease(), `poll-${poll}`);
      if (!record) break;
      expect(record).toMatchObject({
        state: 'WAITING_FOR_RESPONSE',
        lease_until: lease(),
        lease_token: `poll-${poll}`,
      });
      claimed.push(record._id);
    }

    expect(claimed).toEqual(['due-first', 'due-second', 'expired-third', 'due-fourth']);
    expect(await responses.claim(new Date(now), lease(), 'poll-last')).toBeNull();
    // the fires not due and the live leases were left alone
    expect(await responses.backlog()).toBe(NOT_DUE);
    const alive = await connection
      .collection<ResponseRecord>(RESPONSES)
      .countDocuments({ state: 'WAITING_FOR_RESPONSE', lease_token: 'alive' });
    expect(alive).toBe(SENDING);
  });

  it('claims a fire the moment it is due and a lease the moment it expired, not before', async () => {
    const firstDue = at(1_000); // later-0
    expect(await responses.claim(new Date(firstDue.getTime() - 1), lease(), 'early')).toBeNull();
    expect((await responses.claim(firstDue, lease(), 'on-time'))?._id).toBe('later-0');

    const firstExpiry = at(30_000); // sending-0; later-1 .. later-29 fall due by then
    const claimed: string[] = [];
    for (let poll = 0; poll < 40; poll++) {
      const record = await responses.claim(new Date(firstExpiry.getTime() + 1), lease(), `late-${poll}`);
      if (!record) break;
      claimed.push(record._id);
    }
    // sending-0's due_at (-5 s) is the oldest: its expired lease is taken first
    expect(claimed).toEqual(['sending-0', ...Array.from({ length: 29 }, (_, i) => `later-${i + 1}`)]);
  });
});
