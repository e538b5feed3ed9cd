import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { checkAddressFor, type TargetPolicy } from './address';
import { TargetRefusedError } from './errors';

/** Resolves a host name to every address it has; injectable so tests never touch real DNS. */
export type Resolver = (hostname: string) => Promise<readonly LookupAddress[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });

/**
 * A `lookup` for net/tls.connect that resolves the host, refuses it if ANY address is refused,
 * and hands back only addresses it checked. The socket then connects to exactly those, so a DNS
 * answer that changes between a check and the connection (rebinding) cannot slip through.
 */
export function guardedLookup(policy: TargetPolicy, resolve: Resolver = systemResolver): LookupFunction {
  const refused = (hostname: string, reason: string) =>
    new TargetRefusedError(hostname, reason, policy.remedy);
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        if (addresses.length === 0) {
          callback(refused(hostname, 'the name has no addresses'), '');
          return;
        }
        for (const { address } of addresses) {
          const verdict = checkAddressFor(address, policy);
          if (verdict.refused) {
            callback(refused(hostname, verdict.reason), '');
            return;
          }
        }
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const wanted = family === 0 ? [...addresses] : addresses.filter((entry) => entry.family === family);
        const first = wanted[0];
        if (!first) {
          callback(refused(hostname, `the name has no IPv${family} address`), '');
        } else if (options.all) {
          callback(null, wanted);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}

/** The policy (PACK_ALLOWED_TARGET_CIDRS parsed by parseAllowedCidrs, kinds, remedy) and the connection's options. */
export interface TargetDispatcherOptions extends TargetPolicy {
  /** false accepts any TLS certificate (genai verify_ssl: false); true unless said otherwise. */
  rejectUnauthorized?: boolean;
  /** Connect timeout in milliseconds (undici's default otherwise). */
  connectTimeoutMs?: number;
  /** For tests: answers instead of the system resolver. */
  resolve?: Resolver;
}

/**
 * An undici dispatcher for calls to user-configured URLs. Every new connection checks its
 * target: an IP-literal host directly, a host name through guardedLookup. It does not follow
 * redirects and callers must not add a redirect interceptor or use fetch's default
 * `redirect: 'follow'` (pass `redirect: 'manual'`): a redirect could lead to a URL that the
 * syntactic rules (validateTargetUrl) would refuse. Close it when done, like any Agent.
 */
export function createTargetDispatcher(options: TargetDispatcherOptions): Dispatcher {
  const connector = buildConnector({
    lookup: guardedLookup(options, options.resolve),
    rejectUnauthorized: options.rejectUnauthorized ?? true,
    ...(options.connectTimeoutMs === undefined ? {} : { timeout: options.connectTimeoutMs }),
  });
  const connect: buildConnector.connector = (connectOptions, callback) => {
    // net.connect skips lookup for an IP literal, so that address is checked here.
    const host = connectOptions.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host)) {
      const verdict = checkAddressFor(host, options);
      if (verdict.refused) {
        callback(new TargetRefusedError(host, verdict.reason, options.remedy), null);
        return;
      }
    }
    connector(connectOptions, callback);
  };
  return new Agent({ connect });
}
