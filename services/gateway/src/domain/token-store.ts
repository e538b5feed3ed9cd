import type { Principal, Role } from '@pack/contracts';

export interface UserRecord {
  _id: number;
  username: string;
  role: Role;
  created_at: Date;
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
}

export interface TokenListItem {
  token: Omit<TokenRecord, 'token_hash'>;
  user: UserRecord | undefined;
}

/** Users and API tokens as the authenticator needs them; data/token-repository.ts implements it. */
export interface TokenStore {
  /** The principal of a live token, or null for an unknown or revoked one. */
  principalForHash(hash: string): Promise<Principal | null>;
  findUser(username: string): Promise<UserRecord | null>;
  /** The new user, or the existing one when the username was taken concurrently. */
  createUser(username: string, role: Role): Promise<UserRecord>;
  /** The new token record, or null when a token with this hash exists already. */
  createToken(userId: number, hash: string, prefix: string): Promise<TokenRecord | null>;
  list(limit: number, offset: number): Promise<{ count: number; items: TokenListItem[] }>;
  /** Marks a token revoked once; its hash, or found: false when there is no such token. */
  revoke(id: number): Promise<{ found: boolean; hash?: string }>;
  /** Revocations numbered above `afterSeq`, oldest first. */
  revokedSince(afterSeq: number): Promise<{ hash: string; seq: number }[]>;
  lastRevocationSeq(): Promise<number>;
}
