import mongoose, { type Connection } from 'mongoose';
import { dropDatabase, uniqueName } from '@pack/testkit';
import { RESPONSES, ResponseRepository } from '../src/data/response-repository';
import type { ResponseRecord } from '../src/domain/model';

const FIRES = 60;

function sending(id: string, seq: number, token: string): ResponseRecord {
  const at = new Date(Date.now() - 1000);
  return {
    _id: id,
    webhook_id: 1,
    seq,
    webhook_version: 1,
    state: 'WAITING_FOR_RESPONSE',
    mode: 'submission',
    change_instance_id: 1,
    body: { id: 1, name: 'S', owner: { id: 2, name: 'o' }, state: 'PENDING' },
    event_at: at,
    due_at: at,
    lease_until: new Date(Date.now() + 30_000),
    lease_token: token,
    attempt_count: 0,
    attempts: [],
    status_code: null,
    response_body: null,
    response_truncated: false,
    resend_of: null,
    created_at: at,
    updated_at: at,
  };
}

/**
 * Results of many deliveries go to the database together (one command under load); each still
 * lands on its own fire, once, and only while this replica holds the fire's lease.
 */
describe('"WAITING_FOR_RESPONSE: Request sent and awaiting a response": results written together', () => {
  let connection: Connection;
  let dbName: string;
  let responses: ResponseRepository;

  beforeAll(async () => {
    dbName = uniqueName('t_result_writes');
    connection = await mongoose
      .createConnection(process.env.MONGO_URL!, { dbName, monitorCommands: true })
      .asPromise();
    responses = new ResponseRepository(connection);
  });

  afterAll(async () => {
    await connection.close();
    await dropDatabase(process.env.MONGO_URL!, dbName);
  });

  it('records each attempt once on its own fire, and refuses a fire whose lease another replica took', async () => {
    const records = Array.from({ length: FIRES }, (_, i) => sending(`fire-${i}`, i + 1, `mine-${i}`));
    // Fire 7's lease ran out and another replica claimed it: this replica's result must not land.
    records[7]!.lease_token = 'theirs';
    await connection.collection<ResponseRecord>(RESPONSES).insertMany(records);
    const attempt = (i: number) => ({
      at: new Date(),
      status_code: 200 + (i % 3),
      error: null,
      duration_ms: i,
    });

    const kept = await Promise.all(
      records.map((record, i) =>
        i % 2
          ? responses.finish(record._id, `mine-${i}`, { state: 'OK', status_code: 200 }, attempt(i))
          : responses.reschedule(record._id, `mine-${i}`, new Date(Date.now() + 60_000), attempt(i)),
      ),
    );

    expect(kept.filter((ok) => !ok)).toHaveLength(1);
    expect(kept[7]).toBe(false);
    const stored = await connection
      .collection<ResponseRecord>(RESPONSES)
      .find({}, { sort: { seq: 1 } })
      .toArray();
    stored.forEach((record, i) => {
      if (i === 7) {
        expect(record).toMatchObject({ state: 'WAITING_FOR_RESPONSE', lease_token: 'theirs', attempts: [] });
        return;
      }
      expect(record).toMatchObject({
        state: i % 2 ? 'OK' : 'SCHEDULED',
        lease_token: null,
        attempt_count: 1,
        attempts: [{ status_code: 200 + (i % 3), duration_ms: i }],
      });
    });
  });

  it('results that come while writes are under way share commands: sixty results in three updates', async () => {
    const records = Array.from({ length: FIRES }, (_, i) => sending(`shared-${i}`, 1000 + i, `token-${i}`));
    await connection.collection<ResponseRecord>(RESPONSES).insertMany(records);
    let updates = 0;
    const count = (event: { commandName: string }) => void (event.commandName === 'update' && (updates += 1));
    connection.getClient().on('commandStarted', count);
    try {
      const kept = await Promise.all(
        records.map((record, i) =>
          responses.finish(record._id, `token-${i}`, { state: 'OK', status_code: 200 }, null),
        ),
      );
      expect(kept.every(Boolean)).toBe(true);
    } finally {
      connection.getClient().off('commandStarted', count);
    }
    // The first two go at once, each alone; the fifty-eight that came meanwhile go in one.
    expect(updates).toBe(3);
  });
});
