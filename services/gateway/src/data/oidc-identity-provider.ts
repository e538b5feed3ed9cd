import * as oidc from 'openid-client';
import type { GeneralSettings } from '@pack/contracts';
import { AppError, BadGatewayError, BadRequestError, ForbiddenError } from '@pack/errors';
import type { IdentityProvider, PendingLogin, SignedInIdentity } from '../domain/sign-in';
import { errorCodes, errorField } from '../domain/error-fields';

type OAuthSettings = GeneralSettings['oauth'];

export interface OidcOptions {
  /** OIDC_ISSUER_URL: where the provider's `.well-known/openid-configuration` is; unset: off. */
  issuerUrl: string | undefined;
  timeoutMs: number;
}

const isLoopback = (url: URL) => ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
const NETWORK = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ETIMEDOUT', 'ECONNRESET'];

/** What failed, for the operator (misconfiguration: 502) or the user (a stale or forged callback: 400). */
function providerError(issuer: string, error: unknown): AppError {
  if (error instanceof AppError) return error;
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
 * and PKCE S256, openid-client). The client comes from the settings at each step, so a new
 * CLIENT_ID or CLIENT_SECRET applies to the next sign-in; the issuer is discovered each time.
 */
export class OidcIdentityProvider implements IdentityProvider {
  constructor(private readonly options: OidcOptions) {}

  private async configuration(
    settings: OAuthSettings,
  ): Promise<{ config: oidc.Configuration; issuer: string }> {
    const issuer = this.options.issuerUrl;
    if (!issuer)
      throw new BadGatewayError(
        'Identity-provider OAuth is enabled, but OIDC_ISSUER_URL is not set on the gateway.',
      );
    if (!settings.CLIENT_ID)
      throw new BadGatewayError(
        'Identity-provider OAuth is enabled, but CLIENT_ID is empty in the general settings.',
      );
    const url = new URL(issuer);
    try {
      const config = await oidc.discovery(
        url,
        settings.CLIENT_ID,
        undefined,
        oidc.ClientSecretBasic(settings.CLIENT_SECRET),
        {
          timeout: Math.ceil(this.options.timeoutMs / 1000),
          // Plain HTTP only to a provider on this machine (development and tests).
          ...(url.protocol === 'http:' && isLoopback(url) ? { execute: [oidc.allowInsecureRequests] } : {}),
        },
      );
      return { config, issuer };
    } catch (error) {
      throw providerError(issuer, error);
    }
  }

  async start(settings: OAuthSettings, redirectUri: string): Promise<{ url: string; pending: PendingLogin }> {
    const { config } = await this.configuration(settings);
    const pending: PendingLogin = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      codeVerifier: oidc.randomPKCECodeVerifier(),
    };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid profile email',
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, pending };
  }

  async finish(
    settings: OAuthSettings,
    redirectUri: string,
    callbackUrl: URL,
    pending: PendingLogin,
  ): Promise<SignedInIdentity> {
    const { config, issuer } = await this.configuration(settings);
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
