import type { GeneralSettingsPatch } from '@pack/contracts';
import { ValidationError } from '@pack/errors';
import { validateTargetUrl, type TargetPolicy } from '@pack/net-guard';

/**
 * Refuses, before anything is stored, an issuer URL whose host is an address the gateway would
 * refuse to connect to (link-local, cloud metadata). A host name is checked by the gateway at
 * every connection, since its addresses can change.
 */
export function checkTargetUrls(patch: GeneralSettingsPatch, policy: TargetPolicy): void {
  const issuer = patch.oauth?.ISSUER_URL;
  if (!issuer) return;
  const checked = validateTargetUrl(issuer, policy);
  if (!checked.ok)
    throw new ValidationError('oauth.ISSUER_URL is refused; nothing was changed', {
      errors: { 'oauth.ISSUER_URL': [checked.reason] },
    });
}
