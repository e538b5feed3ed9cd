import type { GeneralSettings } from '@pack/contracts';
import { ForbiddenError, TooManyRequestsError, UnauthorizedError } from '@pack/errors';
import type { Logger } from '@pack/logging';
import type { Authenticator, IssuedToken } from './authenticator';
import {
  identityProviderSetup,
  type IdentityProviderDefaults,
  type IdentityProviderSetup,
} from './identity-provider-setup';
import { roleFor, type RoleRules } from './role-rules';
import type { TokenStore, UserOrigin, UserRecord } from './store';

/** Who the directory or the identity provider says signed in. */
export interface SignedInIdentity {
  username: string;
  email: string | null;
  /** Group names (LDAP `cn`s under GROUP_SEARCH_QUERY_BASE_DN, or the provider's `groups` claim). */
  groups: string[];
}

/** The LDAP directory (data/ldap-directory.ts). */
export interface Directory {
  /**
   * The account whose password this is, or null for an unknown user or a wrong password (the
   * caller must not tell them apart). Misconfiguration throws an AppError that says what failed.
   */
  authenticate(
    settings: GeneralSettings['ldap'],
    username: string,
    password: string,
  ): Promise<SignedInIdentity | null>;
}

/** What the browser carries between the start of an identity-provider sign-in and its callback. */
export interface PendingLogin {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** The issuer and redirect URI the sign-in started with: the code is bound to them. */
  issuer: string;
  redirectUri: string;
}

/** The OpenID provider (data/oidc-identity-provider.ts). */
export interface IdentityProvider {
  start(setup: IdentityProviderSetup): Promise<{ url: string; pending: PendingLogin }>;
  /** Exchanges the code of `callbackUrl` (state, nonce and PKCE checked) for the account. */
  finish(setup: IdentityProviderSetup, callbackUrl: URL, pending: PendingLogin): Promise<SignedInIdentity>;
}

/** Counts failed sign-ins per client address, so repeated guessing is slowed. */
export interface FailureLimiter {
  /** Seconds the address must wait before it may try again; 0 when it may try now. */
  retryAfter(key: string): Promise<number>;
  failed(key: string): Promise<void>;
  succeeded(key: string): Promise<void>;
}

export interface SignInOptions {
  users: TokenStore;
  authenticator: Authenticator;
  directory: Directory;
  identityProvider: IdentityProvider;
  /** The gateway's environment: what blank identity-provider settings fall back to. */
  identityProviderDefaults: IdentityProviderDefaults;
  limiter: FailureLimiter;
  /** The current settings, secrets in plaintext (read before every sign-in). */
  settings: () => Promise<GeneralSettings>;
  roles: RoleRules;
  tokenTtlMs: number;
  logger: Logger;
}

/** One message for an unknown user and a wrong password, so names cannot be probed. */
export const BAD_CREDENTIALS = 'Unknown user name or wrong password.';

/**
 * Sign-in through the LDAP directory or the identity provider. Either way the account's role
 * comes from its groups and the answer is an expiring API token of the user's own; nothing is
 * stored unless the sign-in succeeds.
 */
export class SignIn {
  constructor(private readonly options: SignInOptions) {}

  /** Which ways of signing in are on. */
  async methods(): Promise<{ password: boolean; identity_provider: boolean }> {
    const { ldap, oauth } = await this.options.settings();
    return { password: ldap.ENABLED, identity_provider: oauth.ENABLED };
  }

  async withPassword(username: string, password: string, client: string): Promise<IssuedToken> {
    const { ldap, oauth } = await this.options.settings();
    if (!ldap.ENABLED) {
      throw new ForbiddenError(
        oauth.ENABLED
          ? 'Sign-in with a password is off (LDAP is not enabled in the general settings); sign in through the identity provider at GET /v1/core/auth/oidc/login/.'
          : 'Sign-in is off: neither LDAP nor the identity provider is enabled in the general settings.',
      );
    }
    const wait = await this.options.limiter.retryAfter(client);
    if (wait > 0) {
      throw new TooManyRequestsError(`Too many failed sign-ins from this address; try again in ${wait} s.`, {
        headers: { 'retry-after': String(wait) },
      });
    }
    const identity = await this.options.directory.authenticate(ldap, username, password);
    if (!identity) {
      await this.options.limiter.failed(client);
      this.options.logger.info({ username, client }, 'LDAP sign-in refused');
      throw new UnauthorizedError(BAD_CREDENTIALS);
    }
    await this.options.limiter.succeeded(client);
    return this.issue('ldap', identity);
  }

  /**
   * The identity provider's authorization URL and what the callback will need to check.
   * `requestBase`: the scheme and host the request came to, the redirect base of last resort.
   */
  async startIdentityProvider(requestBase: string): Promise<{ url: string; pending: PendingLogin }> {
    const { oauth } = await this.enabledIdentityProvider();
    const setup = identityProviderSetup(oauth, this.options.identityProviderDefaults, requestBase);
    return this.options.identityProvider.start(setup);
  }

  /** `search`: the callback's query (`?code=...&state=...`), as the provider sent it. */
  async finishIdentityProvider(search: string, pending: PendingLogin): Promise<IssuedToken> {
    const { oauth } = await this.enabledIdentityProvider();
    const { issuer, redirectUri } = pending;
    const setup = identityProviderSetup(
      { ...oauth, ISSUER_URL: issuer },
      this.options.identityProviderDefaults,
      redirectUri,
    );
    const callbackUrl = new URL(`${redirectUri}${search}`);
    const identity = await this.options.identityProvider.finish(
      { ...setup, redirectUri },
      callbackUrl,
      pending,
    );
    return this.issue('oidc', identity);
  }

  private async enabledIdentityProvider(): Promise<GeneralSettings> {
    const settings = await this.options.settings();
    if (!settings.oauth.ENABLED) {
      throw new ForbiddenError(
        settings.ldap.ENABLED
          ? 'Sign-in through the identity provider is off (Identity-provider OAuth is not enabled in the general settings); sign in with a password at POST /v1/core/auth/login/.'
          : 'Sign-in is off: neither LDAP nor the identity provider is enabled in the general settings.',
      );
    }
    return settings;
  }

  /** The user (created on the first sign-in, role and email refreshed on each) and a new token. */
  private async issue(origin: UserOrigin, identity: SignedInIdentity): Promise<IssuedToken> {
    const role = roleFor(identity.groups, this.options.roles);
    if (!role)
      throw new ForbiddenError(`${identity.username} is in no group that grants a role on this platform.`);
    const { users } = this.options;
    let user: UserRecord | null = await users.findUser(identity.username);
    user ??= await users.createUser(identity.username, role, { origin, email: identity.email });
    if ((user.origin ?? 'local') !== origin) {
      // A directory account must not take over a local user (the first admin) of the same name.
      throw new ForbiddenError(
        `The user name ${identity.username} belongs to an account that signs in another way; ask an administrator.`,
      );
    }
    if (user.role !== role || (identity.email !== null && user.email !== identity.email)) {
      user =
        (await users.updateUser(user._id, {
          role,
          ...(identity.email !== null ? { email: identity.email } : {}),
        })) ?? user;
    }
    const issued = await this.options.authenticator.issueExpiring(
      user,
      new Date(Date.now() + this.options.tokenTtlMs),
    );
    this.options.logger.info(
      { username: user.username, origin, role, token_id: issued.tokenId },
      'signed in',
    );
    return issued;
  }
}
