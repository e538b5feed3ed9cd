import { isIP } from 'node:net';
import { checkAddressFor, DEFAULT_REMEDY, type TargetPolicy } from './address';

export type TargetUrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * Syntactic rules for a URL the platform will call (provider base_url, token_url, request_url,
 * webhook target_url). Reasons never repeat the URL: it may carry credentials.
 * With a policy (`allowed`), a host written as an IP literal is classified at once, so a bad
 * address is a 400 when the URL is saved rather than a failure at call time; host names are
 * checked when connecting (createTargetDispatcher), since their addresses can change.
 */
export function validateTargetUrl(value: string, options: Partial<TargetPolicy> = {}): TargetUrlCheck {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, reason: 'must be an absolute http:// or https:// URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, reason: `must use http or https, not ${url.protocol.slice(0, -1)}` };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'must not contain credentials (user:password@); configure them separately' };
  }
  if (url.hostname === '') return { ok: false, reason: 'must name a host' };
  if (url.port === '0') return { ok: false, reason: 'port 0 is not a port a server listens on' };
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (options.allowed && isIP(host)) {
    const verdict = checkAddressFor(host, { ...options, allowed: options.allowed });
    if (verdict.refused)
      return { ok: false, reason: `host ${verdict.reason}: ${options.remedy ?? DEFAULT_REMEDY}` };
  }
  return { ok: true, url };
}
