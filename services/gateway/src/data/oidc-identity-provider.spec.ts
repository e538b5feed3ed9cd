import { ConflictError } from '@pack/errors';
import { createTargetDispatcher, identityProviderPolicy } from '@pack/net-guard';
import { OidcIdentityProvider } from './oidc-identity-provider';

const setup = {
  issuer: 'https://idp.example.com/realms/pack',
  clientId: 'pack',
  clientSecret: 'secret',
  redirectUri: 'https://pack.example.com/v1/core/auth/oidc/callback/',
};

describe('the identity provider behind the address guard', () => {
  it('refuses, with a 409 naming oauth.ISSUER_URL, an issuer whose host name resolves to a cloud metadata address', async () => {
    const dispatcher = createTargetDispatcher({
      ...identityProviderPolicy([]),
      resolve: async () => [{ address: '169.254.169.254', family: 4 }],
    });
    const provider = new OidcIdentityProvider({ timeoutMs: 2000, dispatcher, discoveryCacheMs: 60_000 });
    try {
      const refused = await provider.start(setup).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ConflictError);
      expect((refused as ConflictError).detail).toBe(
        "The identity provider's address is refused: 169.254.169.254 is a cloud metadata address; the identity provider may be reached there only if PACK_ALLOWED_TARGET_CIDRS of the gateway and settings services names its range.",
      );
      expect((refused as ConflictError).errors).toEqual({
        'oauth.ISSUER_URL': ['is refused by the address guard: 169.254.169.254 is a cloud metadata address'],
      });
    } finally {
      await dispatcher.close();
    }
  });
});
