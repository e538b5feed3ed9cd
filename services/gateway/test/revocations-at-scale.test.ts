import mongoose, { type Connection } from 'mongoose';
import { CEILINGS, dropDatabase, uniqueName } from '@pack/testkit';
import { gatewayModels } from '../src/data/models';
import { TokenRepository } from '../src/data/token-repository';
import type { TokenRecord } from '../src/domain/store';

// Tests that drive volume: the long ceiling for every test of the file.
jest.setTimeout(CEILINGS.longTest);

/** Tokens a long life leaves behind, of which REVOKED were revoked (revocation_seq 1..REVOKED). */
const TOKENS = 20_000;
const REVOKED = 1_200;
const SLICE = 1_000;

/** Revoked tokens sit among the others: every 16th token, up to REVOKED of them. */
const seqOf = (i: number) => (i % 16 === 0 && i / 16 < REVOKED ? i / 16 + 1 : null);
const hashOf = (i: number) => `hash-${String(i).padStart(8, '0')}`.padEnd(64, 'x');

/**
 * Every gateway replica polls the revocations newer than the last it saw. The poll
 * reads tokens newest revocation first without a filter (answered in PostgreSQL from the
 * `revocation_seq` index on our FerretDB, docs/decisions/0033 amendment 3) and keeps those newer
 * than it saw; the tokens are written straight into the collection.
 */
describe('"`DELETE /v1/core/tokens/<id>/` revokes": the revocation poll among 20,000 tokens', () => {
  let connection: Connection;
  let dbName: string;
  let tokens: TokenRepository;

  beforeAll(async () => {
    dbName = uniqueName('t_revocations');
    connection = await mongoose.createConnection(process.env.MONGO_URL!, { dbName }).asPromise();
    const models = gatewayModels(connection);
    await models.tokens.createIndexes();
    tokens = new TokenRepository(connection, models);
    for (let from = 0; from < TOKENS; from += SLICE) {
      const slice = Array.from({ length: Math.min(SLICE, TOKENS - from) }, (_, n): TokenRecord => {
        const i = from + n;
        const seq = seqOf(i);
        return {
          _id: i + 1,
          user_id: 1,
          token_hash: hashOf(i),
          prefix: 'pack_',
          created_at: new Date(),
          revoked_at: seq === null ? null : new Date(),
          revocation_seq: seq,
          expires_at: null,
        };
      });
      await connection.collection<TokenRecord>('api_tokens').insertMany(slice);
    }
    // the revocations' counter (@pack/db nextId) as those revocations left it
    await connection
      .collection<{ _id: string; seq: number }>('counters')
      .insertOne({ _id: 'revocations', seq: REVOKED });
  });

  afterAll(async () => {
    await connection.close();
    await dropDatabase(process.env.MONGO_URL!, dbName);
  });

  /** The revocations with seq in from..to, oldest first, as the poll returns them. */
  const revocations = (from: number, to: number) =>
    Array.from({ length: to - from + 1 }, (_, n) => ({ seq: from + n, hash: hashOf((from + n - 1) * 16) }));

  it('starts from the newest revocation', async () => {
    expect(await tokens.lastRevocationSeq()).toBe(REVOKED);
  });

  it('finds nothing newer than the newest, and the few newer than an earlier one, oldest first', async () => {
    expect(await tokens.revokedSince(REVOKED)).toEqual([]);
    expect(await tokens.revokedSince(REVOKED - 1)).toEqual(revocations(REVOKED, REVOKED));
    expect(await tokens.revokedSince(REVOKED - 3)).toEqual(revocations(REVOKED - 2, REVOKED));
  });

  it('reads past a page when many are newer: the oldest 1,000 of them, the rest the next poll', async () => {
    expect(await tokens.revokedSince(REVOKED - 10)).toEqual(revocations(REVOKED - 9, REVOKED));
    expect(await tokens.revokedSince(REVOKED - 11)).toEqual(revocations(REVOKED - 10, REVOKED));
    expect(await tokens.revokedSince(REVOKED - 150)).toEqual(revocations(REVOKED - 149, REVOKED));
    expect(await tokens.revokedSince(0)).toEqual(revocations(1, 1_000));
    expect(await tokens.revokedSince(1_000)).toEqual(revocations(1_001, REVOKED));
  });

  it('sees a token revoked through the repository, once', async () => {
    const unrevoked = 2 + 1; // _id of token 2, never revoked
    expect(await tokens.revoke(unrevoked)).toEqual({ found: true, hash: hashOf(2) });
    expect(await tokens.revoke(unrevoked)).toEqual({ found: true, hash: hashOf(2) });
    const newest = await tokens.lastRevocationSeq();
    expect(newest).toBe(REVOKED + 1);
    expect(await tokens.revokedSince(REVOKED)).toEqual([{ hash: hashOf(2), seq: newest }]);
    expect(await tokens.revokedSince(newest)).toEqual([]);
  });
});

describe('the revocation poll before any token was revoked', () => {
  let connection: Connection;
  let dbName: string;

  beforeAll(async () => {
    dbName = uniqueName('t_revocations_none');
    connection = await mongoose.createConnection(process.env.MONGO_URL!, { dbName }).asPromise();
  });
  afterAll(async () => {
    await connection.close();
    await dropDatabase(process.env.MONGO_URL!, dbName);
  });

  it('starts from 0 and finds nothing, with tokens or without', async () => {
    const tokens = new TokenRepository(connection, gatewayModels(connection));
    expect(await tokens.lastRevocationSeq()).toBe(0);
    expect(await tokens.revokedSince(0)).toEqual([]);
    await tokens.createToken(1, hashOf(1), 'pack_');
    await tokens.createToken(1, hashOf(2), 'pack_');
    expect(await tokens.lastRevocationSeq()).toBe(0);
    expect(await tokens.revokedSince(0)).toEqual([]);
  });
});
