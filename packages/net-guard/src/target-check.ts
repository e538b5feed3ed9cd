import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { checkAddressFor, DEFAULT_REMEDY, type TargetPolicy } from './address';
import { validateTargetUrl } from './url';

/** Why a URL is refused (a sentence naming the rule and what to set, where), or null. */
export type TargetGuard = (url: string) => Promise<string | null>;

/**
 * The check when a URL is saved: its syntax and, for a host name, every address it resolves to
 * now. The connection is checked again (createTargetDispatcher), since DNS answers change. A
 * name that does not resolve yet is accepted: it is refused at connect time if it then points
 * somewhere refused. The same rules and messages as webhook targets.
 */
export function targetUrlCheck(
  policy: TargetPolicy,
  resolve: (host: string) => Promise<string[]> = async (host) =>
    (await lookup(host, { all: true })).map((entry) => entry.address),
): TargetGuard {
  return async (url) => {
    const checked = validateTargetUrl(url, policy);
    if (!checked.ok) return checked.reason;
    const host = checked.url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host)) return null;
    let addresses: string[];
    try {
      addresses = await resolve(host);
    } catch {
      return null;
    }
    for (const address of addresses) {
      const verdict = checkAddressFor(address, policy);
      if (verdict.refused) return `host resolves to ${verdict.reason}: ${policy.remedy ?? DEFAULT_REMEDY}`;
    }
    return null;
  };
}
