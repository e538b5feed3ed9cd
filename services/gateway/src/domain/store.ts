import type { Principal, Role, PageStart } from '@pack/contracts';

/** How a user signs in: tokens issued by an admin, the LDAP directory, or the identity provider. */
export type UserOrigin = 'local' | 'ldap' | 'oidc';

export interface UserRecord {
  _id: number;
  username: string;
  role: Role;
  created_at: Date;
  /** Absent on users stored before sign-in existed: they are local. */
  origin?: UserOrigin;
  /** Where notifications go: from the directory or identity provider, or set by an admin. */
  email?: string | null;
}

export interface TokenRecord {
  _id: number;
  user_id: number;
  /** SHA-256 of the token; the token itself is never stored. */
  token_hash: string;
  /** First characters of the token, so an admin can tell tokens apart in a list. */
  prefix: string;
  created_at: Date;
  revoked_at: Date | null;
  /** Increasing number given at revocation; replicas poll for numbers above the last they saw. */
  revocation_seq: number | null;
  /** Sign-in tokens expire; admin-issued ones do not (null, or absent on older records). */
  expires_at?: Date | null;
}

export interface TokenListItem {
  token: Omit<TokenRecord, 'token_hash'>;
  user: UserRecord | undefined;
}

/** Users and API tokens as the authenticator needs them; data/token-repository.ts implements it. */
export interface TokenStore {
  /** The principal of a live token and when it expires, or null for an unknown, revoked or expired one. */
  principalForHash(hash: string): Promise<{ principal: Principal; expiresAt: Date | null } | null>;
  findUser(username: string): Promise<UserRecord | null>;
  findUserById(id: number): Promise<UserRecord | null>;
  /** The new user, or the existing one when the username was taken concurrently. */
  createUser(
    username: string,
    role: Role,
    extra?: { origin: UserOrigin; email: string | null },
  ): Promise<UserRecord>;
  /** Sets the given fields of a user; the user after the change, or null when there is none. */
  updateUser(id: number, fields: { role?: Role; email?: string | null }): Promise<UserRecord | null>;
  /** The new token record, or null when a token with this hash exists already. */
  createToken(
    userId: number,
    hash: string,
    prefix: string,
    expiresAt?: Date | null,
  ): Promise<TokenRecord | null>;
  list(limit: number, start: PageStart): Promise<{ count: number; items: TokenListItem[] }>;
  /** The id of the token with this hash, or null. */
  tokenIdForHash(hash: string): Promise<number | null>;
  /** Marks a token revoked once; its hash, or found: false when there is no such token. */
  revoke(id: number): Promise<{ found: boolean; hash?: string }>;
  /** Revocations numbered above `afterSeq`, oldest first. */
  revokedSince(afterSeq: number): Promise<{ hash: string; seq: number }[]>;
  lastRevocationSeq(): Promise<number>;
}

/** A per-minute allowance shared by the gateway's replicas (health limits); data/minute-counter.ts implements it. */
export interface MinuteCounter {
  /** Counts one request of `key`; the seconds until its window has room again, 0 when within `limit`. */
  consume(key: string, limit: number): Promise<number>;
}
