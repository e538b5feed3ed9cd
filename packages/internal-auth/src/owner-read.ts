import { systemPrincipal } from '@pack/contracts';
import { principalHeaders } from './internal-auth';

/**
 * Read-your-writes across services: a service that does not find another service's
 * record in its projection asks the owning service before answering that it does not exist. The
 * read goes to the owner's own API as this service's system principal (signed with
 * PACK_INTERNAL_SECRET like every call behind the gateway). The parsed body on 200; null on 404
 * (there is no such record); any other answer or a network error is thrown, so the caller
 * fails with a 5xx rather than answering "no such record" for a record that may exist.
 */
export async function readFromOwner(options: {
  baseUrl: string;
  path: string;
  internalSecret: string;
  /** This service's name, in the system principal. */
  service: string;
  timeoutMs?: number;
  /** How the body is read (JSON.parse; parseExactJson where users' numbers must keep their digits). */
  parse?: (text: string) => unknown;
}): Promise<unknown> {
  const { baseUrl, path, internalSecret, service } = options;
  const response = await fetch(new URL(path, baseUrl), {
    headers: principalHeaders(internalSecret, 'GET', path, systemPrincipal(service)),
    signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
  });
  if (response.status === 404) {
    await response.body?.cancel();
    return null;
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new Error(`${baseUrl}${path} answered ${response.status}`);
  }
  return (options.parse ?? JSON.parse)(await response.text());
}
