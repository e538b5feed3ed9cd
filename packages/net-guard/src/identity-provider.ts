import { PRIVATE_NETWORK_KINDS, type AllowedCidrs, type TargetPolicy } from './address';

/**
 * Where the gateway may reach the identity provider (ISSUER_URL of the general settings, or
 * OIDC_ISSUER_URL): the administrator's own, commonly on the company network, so private
 * networks and loopback pass as for model URLs; link-local and metadata addresses need a range.
 * The settings service checks an address written in the URL when it is saved, the gateway
 * every address at every connection, so both read the range.
 */
export function identityProviderPolicy(allowed: AllowedCidrs): TargetPolicy {
  return {
    allowed,
    allowedKinds: PRIVATE_NETWORK_KINDS,
    remedy:
      'the identity provider may be reached there only if PACK_ALLOWED_TARGET_CIDRS of the gateway and settings services names its range',
  };
}
