import type { Connection } from 'mongoose';
import type { Principal, Role, PageStart } from '@pack/contracts';
import { findPage, isDuplicateKey, nextId, oneBatch } from '@pack/db';
import type { TokenListItem, TokenRecord, TokenStore, UserOrigin, UserRecord } from '../domain/store';
import type { GatewayModels } from './models';

/** Revocations returned per poll at most (revokedSince). */
const REVOCATIONS_READ = 1000;
/**
 * Tokens in revokedSince's first page (a poll mostly finds none or a few newer); each next page
 * holds 4 times as many, up to REVOCATIONS_READ.
 */
const FIRST_PAGE = 10;

/** Every database round trip of the gateway goes through here. */
export class TokenRepository implements TokenStore {
  constructor(
    private readonly connection: Connection,
    private readonly models: GatewayModels,
  ) {}

  /** One indexed equality lookup for the token, one for its user. */
  async principalForHash(hash: string): Promise<{ principal: Principal; expiresAt: Date | null } | null> {
    const token = await this.models.tokens
      .findOne({ token_hash: hash }, { user_id: 1, revoked_at: 1, expires_at: 1 })
      .lean();
    if (!token || token.revoked_at) return null;
    const expiresAt = token.expires_at ?? null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) return null;
    const user = await this.models.users.findById(token.user_id).lean();
    return user ? { principal: { id: user._id, username: user.username, role: user.role }, expiresAt } : null;
  }

  async findUser(username: string): Promise<UserRecord | null> {
    return this.models.users.findOne({ username }).lean();
  }

  async findUserById(id: number): Promise<UserRecord | null> {
    return this.models.users.findById(id).lean();
  }

  async updateUser(id: number, fields: { role?: Role; email?: string | null }): Promise<UserRecord | null> {
    const result = await this.models.users.updateOne({ _id: id }, { $set: fields });
    return result.matchedCount === 0 ? null : this.findUserById(id);
  }

  async createUser(
    username: string,
    role: Role,
    extra: { origin: UserOrigin; email: string | null } = { origin: 'local', email: null },
  ): Promise<UserRecord> {
    const user: UserRecord = {
      _id: await nextId(this.connection, 'users'),
      username,
      role,
      created_at: new Date(),
      ...extra,
    };
    try {
      await this.models.users.create(user);
      return user;
    } catch (error) {
      const existing = isDuplicateKey(error) ? await this.findUser(username) : null;
      if (!existing) throw error;
      return existing;
    }
  }

  async createToken(
    userId: number,
    hash: string,
    prefix: string,
    expiresAt: Date | null = null,
  ): Promise<TokenRecord | null> {
    const token: TokenRecord = {
      _id: await nextId(this.connection, 'api_tokens'),
      user_id: userId,
      token_hash: hash,
      prefix,
      created_at: new Date(),
      revoked_at: null,
      revocation_seq: null,
      expires_at: expiresAt,
    };
    try {
      await this.models.tokens.create(token);
      return token;
    } catch (error) {
      if (isDuplicateKey(error)) return null;
      throw error;
    }
  }

  async list(limit: number, start: PageStart): Promise<{ count: number; items: TokenListItem[] }> {
    const { count, items: tokens } = await findPage(
      this.connection.collection<TokenRecord>(this.models.tokens.collection.collectionName),
      {},
      { sort: { _id: 1 }, limit, ...start, projection: { token_hash: 0 } },
    );
    const userIds = [...new Set(tokens.map((t) => t.user_id))];
    const users = await this.models.users
      .find({ _id: { $in: userIds } }, null, oneBatch(userIds.length))
      .lean();
    const byId = new Map(users.map((u) => [u._id, u]));
    return { count, items: tokens.map((token) => ({ token, user: byId.get(token.user_id) })) };
  }

  async tokenIdForHash(hash: string): Promise<number | null> {
    const token = await this.models.tokens.findOne({ token_hash: hash }, { _id: 1 }).lean();
    return token?._id ?? null;
  }

  async revoke(id: number): Promise<{ found: boolean; hash?: string }> {
    const existing = await this.models.tokens.findById(id, { token_hash: 1, revoked_at: 1 }).lean();
    if (!existing) return { found: false };
    if (existing.revoked_at) return { found: true, hash: existing.token_hash };
    const seq = await nextId(this.connection, 'revocations');
    await this.models.tokens.updateOne(
      { _id: id, revoked_at: null },
      { $set: { revoked_at: new Date(), revocation_seq: seq } },
    );
    return { found: true, hash: existing.token_hash };
  }

  /**
   * The revocations after `afterSeq`, oldest first, at most REVOCATIONS_READ. Read newest first
   * without a filter (unrevoked tokens have `revocation_seq: null`, which sorts last), a page at a
   * time while the whole page is newer: our FerretDB answers that from the `revocation_seq` index
   * in PostgreSQL, where `{$gt: afterSeq}` (a range) or `{$ne: null}` would read every token per
   * poll (docs/decisions/0033, amendment 3).
   */
  async revokedSince(afterSeq: number): Promise<{ hash: string; seq: number }[]> {
    // by seq: a revocation landing between two pages shifts the next one, which then repeats one
    const newer = new Map<number, string>();
    for (let skip = 0, limit = FIRST_PAGE; ; skip += limit, limit = Math.min(limit * 4, REVOCATIONS_READ)) {
      const page = await this.newestRevocations(skip, limit);
      const isNewer = (seq: number | null): seq is number => seq !== null && seq > afterSeq;
      for (const row of page) if (isNewer(row.revocation_seq)) newer.set(row.revocation_seq, row.token_hash);
      if (page.length < limit || !isNewer(page[page.length - 1]!.revocation_seq)) break;
    }
    return [...newer]
      .sort(([a], [b]) => a - b)
      .slice(0, REVOCATIONS_READ)
      .map(([seq, hash]) => ({ hash, seq }));
  }

  async lastRevocationSeq(): Promise<number> {
    const [newest] = await this.newestRevocations(0, 1);
    return newest?.revocation_seq ?? 0;
  }

  /** Tokens by `revocation_seq`, newest first (null last): one pushed-down, indexed read. */
  private newestRevocations(
    skip: number,
    limit: number,
  ): Promise<Pick<TokenRecord, 'token_hash' | 'revocation_seq'>[]> {
    return this.models.tokens
      .find({}, { token_hash: 1, revocation_seq: 1 })
      .sort({ revocation_seq: -1 })
      .skip(skip)
      .limit(limit)
      .batchSize(limit + 1) // one command, no cursor left open (@pack/db oneBatch)
      .lean();
  }
}
