import { spawn } from 'node:child_process';
import path from 'node:path';
import { recordProcess, waitFor } from '@pack/testkit';
import { freePort } from './slapd';

export interface OidcProvider {
  issuer: string;
  stop(): Promise<void>;
}

export interface ProviderOptions {
  port: number;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** Account id -> the claims the provider releases for it. */
  accounts: Record<string, Record<string, unknown>>;
}

/** A port for a provider that is started later (its issuer URL must be known first). */
export const reservePort = freePort;

/** Starts the oidc-provider process on loopback and waits until it listens. */
export async function startOidcProvider(options: ProviderOptions): Promise<OidcProvider> {
  const child = spawn(process.execPath, [path.join(__dirname, 'oidc-provider-server.js')], {
    env: {
      PATH: process.env.PATH,
      PORT: String(options.port),
      CLIENT_ID: options.clientId,
      CLIENT_SECRET: options.clientSecret,
      REDIRECT_URI: options.redirectUri,
      ACCOUNTS: JSON.stringify(options.accounts),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  recordProcess(child);
  let output = '';
  let exited = false;
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.once('exit', () => (exited = true));
  await waitFor(
    () => {
      if (exited) throw new Error(`the OpenID provider exited: ${output.slice(-500)}`);
      return output.includes('ready');
    },
    { what: 'the OpenID provider to listen' },
  );
  return {
    issuer: `http://127.0.0.1:${options.port}`,
    async stop() {
      if (exited) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await gone;
    },
  };
}

/**
 * What a browser does between the gateway's start route and its callback: follows redirects,
 * keeping the provider's cookies and the gateway's, and signs in as `account` at the provider's
 * interaction page. Returns the callback URL the provider sent the browser to, and the
 * gateway's login cookie.
 */
export async function browseToCallback(
  gatewayUrl: string,
  account: string,
  /** Where the redirect URI points, when another replica than `gatewayUrl` finishes the sign-in. */
  callbackBase = gatewayUrl,
  /** The start route's answer, when the test started the sign-in itself. */
  started?: Response,
): Promise<{ callbackUrl: string; gatewayCookie: string }> {
  const start = started ?? (await fetch(`${gatewayUrl}/v1/core/auth/oidc/login/`, { redirect: 'manual' }));
  if (start.status !== 302)
    throw new Error(`the start route answered ${start.status}: ${await start.text()}`);
  const gatewayCookie = (start.headers.get('set-cookie') ?? '').split(';')[0]!;
  const jar = new Map<string, string>();
  let url = start.headers.get('location')!;
  for (let hop = 0; hop < 10; hop += 1) {
    if (url.startsWith(callbackBase)) return { callbackUrl: url, gatewayCookie };
    const target = new URL(url);
    if (target.pathname.startsWith('/interaction/') && !target.searchParams.has('account'))
      target.searchParams.set('account', account);
    const response = await fetch(target, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const index = pair!.indexOf('=');
      jar.set(pair!.slice(0, index), pair!.slice(index + 1));
    }
    const location = response.headers.get('location');
    if (!location)
      throw new Error(
        `the provider answered ${response.status} without a redirect: ${await response.text()}`,
      );
    url = new URL(location, target).href;
  }
  throw new Error('too many redirects');
}
