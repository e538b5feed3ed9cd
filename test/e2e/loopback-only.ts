import dns from 'node:dns';
import net from 'node:net';

const LOOPBACK_NAMES = new Set(['localhost']);

function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (LOOPBACK_NAMES.has(bare.toLowerCase())) return true;
  if (net.isIPv4(bare)) return bare.startsWith('127.');
  if (net.isIPv6(bare)) return bare === '::1' || /^::ffff:127\./i.test(bare);
  return false;
}

function refusal(host: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${host} (this test talks to loopback only)`), {
    code: 'ENOTFOUND',
    hostname: host,
  });
}

/**
 * Keeps every connection of this process on loopback while a test feeds the services generated
 * input (settings with any SMTP, LDAP or identity-provider host, URLs with any host): a name
 * other than localhost does not resolve and a socket to a non-loopback address fails, as on a
 * machine without a network. Returns the function that puts the real ones back.
 */
export function loopbackOnly(): () => void {
  const { lookup, resolve4, resolve6 } = dns;
  const promisesLookup = dns.promises.lookup;
  // Kept unbound on purpose: it is put back on the prototype and called with each socket as `this`.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const connect = net.Socket.prototype.connect;

  dns.lookup = ((host: string, ...rest: unknown[]) => {
    const callback = rest[rest.length - 1] as (error: Error | null) => void;
    if (!isLoopback(host)) {
      process.nextTick(() => callback(refusal(host)));
      return {} as never;
    }
    return (lookup as (...args: unknown[]) => unknown)(host, ...rest);
  }) as typeof dns.lookup;
  dns.promises.lookup = ((host: string, ...rest: unknown[]) =>
    isLoopback(host)
      ? (promisesLookup as (...args: unknown[]) => unknown)(host, ...rest)
      : Promise.reject(refusal(host))) as typeof dns.promises.lookup;
  for (const name of ['resolve4', 'resolve6'] as const)
    dns[name] = ((host: string, ...rest: unknown[]) => {
      const callback = rest[rest.length - 1] as (error: Error | null) => void;
      process.nextTick(() => callback(refusal(host)));
    }) as never;

  net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
    const first = args[0];
    const options = (typeof first === 'object' && first !== null ? first : {}) as net.NetConnectOpts;
    const host =
      typeof first === 'object' && first !== null
        ? (options as net.TcpNetConnectOpts).host
        : typeof args[1] === 'string'
          ? args[1]
          : undefined;
    const literal = host !== undefined && net.isIP(host.replace(/^\[|\]$/g, '')) !== 0;
    if (!('path' in options && options.path) && literal && !isLoopback(host)) {
      process.nextTick(() => this.destroy(refusal(host)));
      return this;
    }
    return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
  };

  return () => {
    Object.assign(dns, { lookup, resolve4, resolve6 });
    dns.promises.lookup = promisesLookup;
    net.Socket.prototype.connect = connect;
  };
}
