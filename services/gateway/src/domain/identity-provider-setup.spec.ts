import { ConflictError } from '@pack/errors';
import { identityProviderSetup } from './identity-provider-setup';

const oauth = {
  ENABLED: true,
  CLIENT_ID: 'pack',
  CLIENT_SECRET: 'secret',
  ISSUER_URL: '',
  REDIRECT_BASE_URL: '',
};
const none = { issuerUrl: undefined, publicUrl: undefined };
const env = { issuerUrl: 'https://env-idp.example.com', publicUrl: 'https://env.example.com' };
const REQUEST = 'http://10.1.2.3:8080';

function refusal(run: () => unknown): { detail: string; errors: unknown } {
  try {
    run();
  } catch (error) {
    if (error instanceof ConflictError) return { detail: error.detail, errors: error.errors };
    throw error;
  }
  throw new Error('not refused');
}

describe('identity-provider setup: the settings first, the gateway environment for a blank field', () => {
  it('takes the settings over the environment, and the environment over the request', () => {
    const settings = {
      ...oauth,
      ISSUER_URL: 'https://idp.example.com',
      REDIRECT_BASE_URL: 'https://pack.example.com',
    };
    expect(identityProviderSetup(settings, env, REQUEST)).toEqual({
      issuer: 'https://idp.example.com',
      clientId: 'pack',
      clientSecret: 'secret',
      redirectUri: 'https://pack.example.com/v1/core/auth/oidc/callback/',
    });
    expect(identityProviderSetup(oauth, env, REQUEST)).toMatchObject({
      issuer: 'https://env-idp.example.com',
      redirectUri: 'https://env.example.com/v1/core/auth/oidc/callback/',
    });
    expect(
      identityProviderSetup({ ...oauth, ISSUER_URL: 'https://idp.example.com' }, none, REQUEST),
    ).toMatchObject({
      redirectUri: 'http://10.1.2.3:8080/v1/core/auth/oidc/callback/',
    });
  });

  it('names every missing setting and where to set it', () => {
    expect(refusal(() => identityProviderSetup({ ...oauth, CLIENT_ID: '' }, none, REQUEST))).toEqual({
      detail:
        'Sign-in through the identity provider is enabled but not usable: set oauth.ISSUER_URL, oauth.CLIENT_ID in the general settings (Identity-provider OAuth).',
      errors: {
        'oauth.ISSUER_URL': [
          "is empty and the gateway has no OIDC_ISSUER_URL: set the identity provider's issuer URL in the general settings (Identity-provider OAuth)",
        ],
        'oauth.CLIENT_ID': ['is empty: set it in the general settings (Identity-provider OAuth)'],
      },
    });
  });

  it('allows plain http to a provider on the gateway host only', () => {
    expect(
      identityProviderSetup({ ...oauth, ISSUER_URL: 'http://127.0.0.1:9000' }, none, REQUEST).issuer,
    ).toBe('http://127.0.0.1:9000');
    expect(
      refusal(() => identityProviderSetup(oauth, { ...none, issuerUrl: 'http://idp.internal' }, REQUEST))
        .errors,
    ).toEqual({
      'oauth.ISSUER_URL': [
        "is empty and OIDC_ISSUER_URL of the gateway is a plain http URL to another host: use https (plain http only to a provider on the gateway's own host)",
      ],
    });
  });
});
