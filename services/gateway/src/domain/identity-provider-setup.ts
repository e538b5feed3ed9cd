import type { GeneralSettings } from '@pack/contracts';
import { ConflictError, type FieldErrors } from '@pack/errors';

/** Where the identity provider sends the browser back; the redirect URI is the public base plus this. */
export const OIDC_CALLBACK_PATH = '/v1/core/auth/oidc/callback/';

/** The gateway's environment, which fills the settings' blank fields. */
export interface IdentityProviderDefaults {
  /** OIDC_ISSUER_URL. */
  issuerUrl: string | undefined;
  /** PUBLIC_URL. */
  publicUrl: string | undefined;
}

/** What one sign-in through the identity provider uses, every source resolved. */
export interface IdentityProviderSetup {
  issuer: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

const WHERE = 'in the general settings (Identity-provider OAuth)';
const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Plain HTTP only to a provider on the gateway's own host (development and tests). */
export const insecureAllowed = (url: URL) => url.protocol === 'http:' && LOOPBACK.has(url.hostname);

/**
 * The issuer, client and redirect URI of a sign-in: the settings' values, a blank one taken from
 * the gateway's environment, the redirect base else from the request itself (`requestBase`).
 * Something missing is the administrator's to set, so the refusal (409) names each field and
 * where to set it rather than failing at the provider.
 */
export function identityProviderSetup(
  oauth: GeneralSettings['oauth'],
  defaults: IdentityProviderDefaults,
  requestBase: string,
): IdentityProviderSetup {
  const errors: FieldErrors = {};
  const issuer = oauth.ISSUER_URL || defaults.issuerUrl || '';
  const source = oauth.ISSUER_URL ? 'ISSUER_URL' : 'OIDC_ISSUER_URL';
  if (!issuer)
    errors['oauth.ISSUER_URL'] = [
      `is empty and the gateway has no OIDC_ISSUER_URL: set the identity provider's issuer URL ${WHERE}`,
    ];
  else if (new URL(issuer).protocol !== 'https:' && !insecureAllowed(new URL(issuer)))
    errors['oauth.ISSUER_URL'] = [
      `${source === 'ISSUER_URL' ? 'is' : 'is empty and OIDC_ISSUER_URL of the gateway is'} a plain http URL to another host: use https (plain http only to a provider on the gateway's own host)`,
    ];
  for (const field of ['CLIENT_ID', 'CLIENT_SECRET'] as const)
    if (!oauth[field]) errors[`oauth.${field}`] = [`is empty: set it ${WHERE}`];
  const fields = Object.keys(errors);
  if (fields.length > 0)
    throw new ConflictError(
      `Sign-in through the identity provider is enabled but not usable: set ${fields.join(', ')} ${WHERE}.`,
      { errors },
    );
  const base = oauth.REDIRECT_BASE_URL || defaults.publicUrl || requestBase;
  return {
    issuer,
    clientId: oauth.CLIENT_ID,
    clientSecret: oauth.CLIENT_SECRET,
    redirectUri: new URL(OIDC_CALLBACK_PATH, base).href,
  };
}
