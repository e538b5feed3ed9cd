import type { Principal, Role, PageStart } from '@pack/contracts';
import type { Logger } from '@pack/logging';
import { ConflictError } from '@pack/errors';
import { generateToken, hashToken, tokenPrefix } from './token';
import { TokenCache } from './token-cache';
import type { TokenListItem, TokenStore, UserRecord } from './store';

export interface IssuedToken {
  token: string;
  tokenId: number;
  expiresAt: Date | null;
  user: Principal;
}

/**
 * Authenticates API tokens. A warm token costs no database round trip; every replica polls the
 * revocation sequence, so a revoked token stops working everywhere within one poll interval.
 */
export class Authenticator {
  private readonly cache = new TokenCache();
  private lastSeq = 0;
  private timer?: NodeJS.Timeout;
  private polling = false;

  constructor(
    private readonly repository: TokenStore,
    private readonly logger: Logger,
    private readonly pollMs: number,
  ) {}

  async authenticate(token: string): Promise<Principal | null> {
    const hash = hashToken(token);
    const cached = this.cache.get(hash);
    if (cached !== undefined) return cached;
    const found = await this.repository.principalForHash(hash);
    this.cache.set(hash, found?.principal ?? null, Date.now(), found?.expiresAt?.getTime());
    return found?.principal ?? null;
  }

  /** A token for a user who signed in; it stops working at `expiresAt` (and can be revoked). */
  async issueExpiring(user: UserRecord, expiresAt: Date): Promise<IssuedToken> {
    const token = generateToken();
    const record = await this.repository.createToken(
      user._id,
      hashToken(token),
      tokenPrefix(token),
      expiresAt,
    );
    if (!record) throw new Error('a new random token collided with a stored one'); // 2^-256: never
    return {
      token,
      tokenId: record._id,
      expiresAt,
      user: { id: user._id, username: user.username, role: user.role },
    };
  }

  async issue(username: string, role: Role): Promise<IssuedToken> {
    const user = await this.userWithRole(username, role);
    const token = generateToken();
    const record = await this.repository.createToken(user._id, hashToken(token), tokenPrefix(token));
    if (!record) throw new Error('a new random token collided with a stored one'); // 2^-256: never
    return {
      token,
      tokenId: record._id,
      expiresAt: null,
      user: { id: user._id, username: user.username, role: user.role },
    };
  }

  list(limit: number, start: PageStart): Promise<{ count: number; items: TokenListItem[] }> {
    return this.repository.list(limit, start);
  }

  async revoke(id: number): Promise<boolean> {
    const result = await this.repository.revoke(id);
    if (result.hash) this.cache.evict(result.hash);
    return result.found;
  }

  /** Sign-out: revokes the token itself (the caller's own), as an admin's DELETE would. */
  async revokeToken(token: string): Promise<void> {
    const id = await this.repository.tokenIdForHash(hashToken(token));
    if (id !== null) await this.revoke(id);
  }

  /** Makes sure `token` belongs to an admin called `username` (PACK_ADMIN_TOKEN at start). */
  async ensureAdminToken(username: string, token: string): Promise<void> {
    const hash = hashToken(token);
    if (await this.repository.principalForHash(hash)) return;
    const user = await this.userWithRole(username, 'admin');
    // null: another replica starting with the same PACK_ADMIN_TOKEN registered it first.
    if (!(await this.repository.createToken(user._id, hash, tokenPrefix(token)))) return;
    this.logger.info({ username }, 'admin token from PACK_ADMIN_TOKEN registered');
  }

  /** The user called `username`, created with `role` if new; 409 if it exists with another role. */
  private async userWithRole(username: string, role: Role): Promise<UserRecord> {
    const user =
      (await this.repository.findUser(username)) ?? (await this.repository.createUser(username, role));
    if (user.role !== role) {
      throw new ConflictError(
        `user ${username} exists with role ${user.role}; a token carries its user's role`,
      );
    }
    return user;
  }

  async startRevocationPolling(): Promise<void> {
    this.lastSeq = await this.repository.lastRevocationSeq();
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      for (const { hash, seq } of await this.repository.revokedSince(this.lastSeq)) {
        this.cache.evict(hash);
        this.lastSeq = Math.max(this.lastSeq, seq);
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'revocation poll failed');
    } finally {
      this.polling = false;
    }
  }
}
