/**
 * bench/ferretdb/poll-queries: the time per call of the two polls every replica runs,
 * as they were and as they are, at two sizes, on the server of MONGO_URL (our FerretDB).
 *   dispatcher claim   `{state, due_at: {$lte}}` / `{state, lease_until: {$lt}}` sorted, limit 1
 *                      (a range: FerretDB's in-memory path) against `{state}` sorted on the time
 *                      field, limit 1 (answered in PostgreSQL from an index)
 *   gateway revocations `{revocation_seq: {$gt}}` / `{$ne: null}` against no filter sorted by
 *                      revocation_seq descending, a page (TokenRepository.revokedSince)
 * Loads SIZES documents into a throw-away database per size (a few due, expired, revoked), then
 * prints the median ms of CALLS calls of each query. No assertion: the figures go into
 * docs/decisions/0033, amendment 3.
 *
 *   eval "$(bash scripts/infra.sh env)" && pnpm bench:poll-queries   (SIZES=2000,20000 CALLS=40)
 */
import mongoose, { type Connection } from 'mongoose';
import { dropDatabase, uniqueName } from '@pack/testkit';
import {
  ResponseRepository,
  RESPONSES,
} from '../../services/webhook-dispatcher/src/data/response-repository';
import { gatewayModels } from '../../services/gateway/src/data/models';
import { TokenRepository } from '../../services/gateway/src/data/token-repository';

const sizes = (process.env.SIZES ?? '2000,20000').split(',').map(Number);
const calls = Number(process.env.CALLS ?? 40);

async function median(run: () => Promise<unknown>): Promise<number> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const start = process.hrtime.bigint();
    await run();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

async function inSlices<T>(n: number, make: (i: number) => T, insert: (docs: T[]) => Promise<unknown>) {
  for (let from = 0; from < n; from += 1000)
    await insert(Array.from({ length: Math.min(1000, n - from) }, (_, i) => make(from + i)));
}

async function responses(connection: Connection, size: number): Promise<Record<string, number>> {
  const repository = new ResponseRepository(connection);
  await repository.ensureIndexes();
  const now = Date.now();
  await inSlices(
    size,
    (i) => {
      // 1 in 10 WAITING (3 of them expired), 5 SCHEDULED due, the rest due in the future
      const waiting = i % 10 === 0;
      return {
        _id: `r${i}`,
        webhook_id: 1 + (i % 50),
        seq: i,
        state: waiting ? 'WAITING_FOR_RESPONSE' : 'SCHEDULED',
        body: { event: 'x', data: { i } },
        event_at: new Date(now),
        due_at: new Date(now + (i < 50 && !waiting ? -1000 : 3_600_000) + i),
        lease_until: waiting ? new Date(now + (i < 30 ? -1000 : 60_000) + i) : null,
        lease_token: waiting ? `t${i}` : null,
        attempt_count: 0,
        attempts: [],
        created_at: new Date(now),
        updated_at: new Date(now),
      };
    },
    (docs) => connection.collection(RESPONSES).insertMany(docs as never[]),
  );
  const collection = connection.collection(RESPONSES);
  const at = new Date(now);
  const first = { sort: { due_at: 1 }, limit: 1, projection: { _id: 1, due_at: 1 } } as const;
  const lease = {
    sort: { lease_until: 1 },
    limit: 1,
    projection: { _id: 1, due_at: 1, lease_until: 1 },
  } as const;
  return {
    'claim due, old': await median(() =>
      collection.find({ state: 'SCHEDULED', due_at: { $lte: at } }, first).toArray(),
    ),
    'claim due, new': await median(() => collection.find({ state: 'SCHEDULED' }, first).toArray()),
    'claim expired, old': await median(() =>
      collection.find({ state: 'WAITING_FOR_RESPONSE', lease_until: { $lt: at } }, first).toArray(),
    ),
    'claim expired, new': await median(() =>
      collection.find({ state: 'WAITING_FOR_RESPONSE' }, lease).toArray(),
    ),
  };
}

async function tokens(connection: Connection, size: number): Promise<Record<string, number>> {
  const models = gatewayModels(connection);
  await models.tokens.createIndexes();
  const repository = new TokenRepository(connection, models);
  const revoked = 20;
  await inSlices(
    size,
    (i) => ({
      _id: i + 1,
      user_id: 1,
      token_hash: `hash-${String(i).padStart(8, '0')}`.padEnd(64, 'x'),
      prefix: 'pack_',
      created_at: new Date(),
      revoked_at: i % Math.floor(size / revoked) === 0 ? new Date() : null,
      revocation_seq: i % Math.floor(size / revoked) === 0 ? i / Math.floor(size / revoked) + 1 : null,
      expires_at: null,
    }),
    (docs) => connection.collection('api_tokens').insertMany(docs as never[]),
  );
  const afterSeq = revoked - 2; // the last two revocations are new to the poll
  const old = () =>
    models.tokens
      .find({ revocation_seq: { $gt: afterSeq } }, { token_hash: 1, revocation_seq: 1 })
      .sort({ revocation_seq: 1 })
      .limit(1000)
      .lean();
  const oldLast = () =>
    models.tokens
      .findOne({ revocation_seq: { $ne: null } }, { revocation_seq: 1 })
      .sort({ revocation_seq: -1 })
      .lean();
  return {
    'revokedSince, old': await median(old),
    'revokedSince, new': await median(() => repository.revokedSince(afterSeq)),
    'lastRevocationSeq, old': await median(oldLast),
    'lastRevocationSeq, new': await median(() => repository.lastRevocationSeq()),
  };
}

async function main(): Promise<void> {
  const url = process.env.MONGO_URL;
  if (!url) throw new Error('set MONGO_URL: eval "$(bash scripts/infra.sh env)"');
  const table: Record<string, Record<string, string>> = {};
  for (const size of sizes) {
    const dbName = uniqueName('bench_poll');
    const connection = await mongoose.createConnection(url, { dbName }).asPromise();
    try {
      const figures = { ...(await responses(connection, size)), ...(await tokens(connection, size)) };
      for (const [name, ms] of Object.entries(figures))
        (table[name] ??= {})[`${size} docs, ms`] = ms.toFixed(2);
    } finally {
      await connection.close();
      await dropDatabase(url, dbName);
    }
  }
  console.table(table);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
