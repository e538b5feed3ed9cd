import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';
import { fetch as undiciFetch, type Dispatcher, type RequestInit as UndiciRequestInit } from 'undici';
import { AppError, BadGatewayError, BadRequestError, ConflictError, ForbiddenError } from '@pack/errors';
import { TargetRefusedError } from '@pack/net-guard';
import type { IdentityProvider, PendingLogin, SignedInIdentity } from '../domain/sign-in';
import { insecureAllowed, type IdentityProviderSetup } from '../domain/identity-provider-setup';
import { errorCodes, errorField } from '../domain/error-fields';

export interface OidcOptions {
  timeoutMs: number;
  /** Checks every address the provider's host resolves to, at every connection (net-guard). */
  dispatcher: Dispatcher;
  /** How long a provider's discovered configuration is used before it is read again. */
  discoveryCacheMs: number;
  now?: () => number;
}

const NETWORK = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ETIMEDOUT', 'ECONNRESET'];

/** The guard's refusal along an error's cause chain (fetch wraps it). */
function refusal(error: unknown): TargetRefusedError | undefined {
  let current: unknown = error;
  for (let i = 0; i < 5 && typeof current === 'object' && current !== null; i += 1) {
    if (current instanceof TargetRefusedError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** What failed, for the operator (misconfiguration: 502) or the user (a stale or forged callback: 400). */
function providerError(issuer: string, error: unknown): AppError {
  if (error instanceof AppError) return error;
  const refused = refusal(error);
  if (refused)
    return new ConflictError(
      `The identity provider's address is refused: ${refused.reason}; ${refused.remedy}.`,
      {
        errors: { 'oauth.ISSUER_URL': [`is refused by the address guard: ${refused.reason}`] },
        cause: error,
      },
    );
  const code = errorField(error, 'code');
  const codes = errorCodes(error);
  const message = error instanceof Error ? error.message : String(error);
  const network = codes.find((c) => NETWORK.includes(c));
  if (network)
    return new BadGatewayError(`The identity provider ${issuer} is unreachable (${network}).`, {
      cause: error,
    });
  const tls = codes.find((c) => /CERT|TLS|SSL/i.test(c));
  if (tls)
    return new BadGatewayError(`TLS with the identity provider ${issuer} failed: ${tls}.`, { cause: error });
  const oauthError = (error as { error?: unknown }).error;
  if (
    code === 'OAUTH_WWW_AUTHENTICATE_CHALLENGE' ||
    oauthError === 'invalid_client' ||
    oauthError === 'unauthorized_client'
  )
    return new BadGatewayError(
      `The identity provider ${issuer} refused the client; check CLIENT_ID and CLIENT_SECRET in the general settings.`,
      { cause: error },
    );
  if (code === 'OAUTH_AUTHORIZATION_RESPONSE_ERROR')
    return new ForbiddenError(`The identity provider refused the sign-in (${String(oauthError)}).`, {
      cause: error,
    });
  if (oauthError === 'invalid_grant')
    return new BadRequestError(
      'The authorization code is invalid or was used already; start the sign-in again.',
      {
        cause: error,
      },
    );
  if (code.startsWith('OAUTH_'))
    return new BadRequestError(
      `The identity provider's answer did not check out (${message}); start the sign-in again.`,
      {
        cause: error,
      },
    );
  return new BadGatewayError(`The identity provider ${issuer} failed: ${message}`, { cause: error });
}

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);

/**
 * The platform as an OpenID Connect relying party (authorization code flow with state, nonce
 * and PKCE S256, openid-client). The settings are read at each step; the client is built again
 * whenever the issuer, CLIENT_ID or CLIENT_SECRET differ from the last sign-in's, and a
 * provider's discovered configuration is read again after `discoveryCacheMs`.
 */
export class OidcIdentityProvider implements IdentityProvider {
  private readonly clients = new Map<string, { key: string; config: oidc.Configuration; until: number }>();

  constructor(private readonly options: OidcOptions) {}

  /**
   * undici's fetch, the package the guard's dispatcher comes from, so a refusal keeps its type
   * (Node's own fetch reports it as a bare Error); its answer handed over as the global Response
   * openid-client checks for.
   */
  private readonly guardedFetch: oidc.CustomFetch = async (url, init) => {
    const answer = await undiciFetch(url, {
      ...init,
      body: init.body as UndiciRequestInit['body'],
      dispatcher: this.options.dispatcher,
    });
    return new Response(answer.body as ReadableStream | null, {
      status: answer.status,
      statusText: answer.statusText,
      headers: [...answer.headers],
    });
  };

  private async configuration(setup: IdentityProviderSetup): Promise<oidc.Configuration> {
    const now = (this.options.now ?? Date.now)();
    const key = createHash('sha256')
      .update(JSON.stringify([setup.clientId, setup.clientSecret]))
      .digest('base64url');
    const cached = this.clients.get(setup.issuer);
    if (cached && cached.until > now) {
      if (cached.key === key) return cached.config;
      // Another client of the same provider: its discovered metadata still holds.
      const config = this.client(setup, cached.config.serverMetadata());
      this.clients.set(setup.issuer, { key, config, until: cached.until });
      return config;
    }
    const url = new URL(setup.issuer);
    try {
      const config = await oidc.discovery(
        url,
        setup.clientId,
        undefined,
        oidc.ClientSecretBasic(setup.clientSecret),
        {
          timeout: Math.ceil(this.options.timeoutMs / 1000),
          [oidc.customFetch]: this.guardedFetch,
          ...(insecureAllowed(url) ? { execute: [oidc.allowInsecureRequests] } : {}),
        },
      );
      // Failures are not kept: the next sign-in tries again.
      this.clients.set(setup.issuer, { key, config, until: now + this.options.discoveryCacheMs });
      return config;
    } catch (error) {
      throw providerError(setup.issuer, error);
    }
  }

  private client(setup: IdentityProviderSetup, server: oidc.ServerMetadata): oidc.Configuration {
    const config = new oidc.Configuration(
      server,
      setup.clientId,
      undefined,
      oidc.ClientSecretBasic(setup.clientSecret),
    );
    config.timeout = Math.ceil(this.options.timeoutMs / 1000);
    config[oidc.customFetch] = this.guardedFetch;
    if (insecureAllowed(new URL(setup.issuer))) oidc.allowInsecureRequests(config);
    return config;
  }

  async start(setup: IdentityProviderSetup): Promise<{ url: string; pending: PendingLogin }> {
    const config = await this.configuration(setup);
    const pending: PendingLogin = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      codeVerifier: oidc.randomPKCECodeVerifier(),
      issuer: setup.issuer,
      redirectUri: setup.redirectUri,
    };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: setup.redirectUri,
      scope: 'openid profile email',
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, pending };
  }

  async finish(
    setup: IdentityProviderSetup,
    callbackUrl: URL,
    pending: PendingLogin,
  ): Promise<SignedInIdentity> {
    const config = await this.configuration(setup);
    const { issuer, redirectUri } = setup;
    try {
      const tokens = await oidc.authorizationCodeGrant(
        config,
        callbackUrl,
        {
          pkceCodeVerifier: pending.codeVerifier,
          expectedState: pending.state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        },
        { redirect_uri: redirectUri },
      );
      const claims = tokens.claims();
      if (!claims) throw new BadGatewayError(`The identity provider ${issuer} sent no ID token.`);
      // Providers put profile claims in the UserInfo answer rather than in the ID token.
      const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      const merged: Record<string, unknown> = { ...claims, ...info };
      const groups = Array.isArray(merged.groups)
        ? merged.groups.filter((g): g is string => typeof g === 'string')
        : [];
      return {
        username: text(merged.preferred_username) ?? claims.sub,
        email: merged.email_verified === false ? null : text(merged.email),
        groups,
      };
    } catch (error) {
      throw providerError(issuer, error);
    }
  }
}
