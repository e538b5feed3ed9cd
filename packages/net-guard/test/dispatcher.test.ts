import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request, type Dispatcher } from 'undici';
import { createTargetDispatcher, parseAllowedCidrs, TargetRefusedError, type Resolver } from '../src';

/**
 * Only loopback is ever contacted. Each refusal case is built so that a broken guard would
 * connect to the local server (and the connection count would show it), never elsewhere.
 */
interface LocalServer {
  port: number;
  connections: () => number;
  close: () => Promise<void>;
}

async function listen(server: http.Server): Promise<LocalServer> {
  let connections = 0;
  server.on(server instanceof https.Server ? 'secureConnection' : 'connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const handler: http.RequestListener = (req, res) => {
  if (req.url === '/redirect') {
    res.writeHead(302, { location: 'http://10.0.0.1/' }).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'text/plain' }).end('hello from loopback');
};

function answers(...addresses: string[]): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (hostname: string) => {
    asked.push(hostname);
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { asked });
}

async function refusal(promise: Promise<unknown>): Promise<TargetRefusedError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TargetRefusedError);
  return error as TargetRefusedError;
}

describe('createTargetDispatcher against a local server', () => {
  let server: LocalServer;
  const dispatchers: Dispatcher[] = [];
  const dispatcher = (...args: Parameters<typeof createTargetDispatcher>) => {
    const created = createTargetDispatcher(...args);
    dispatchers.push(created);
    return created;
  };

  beforeEach(async () => {
    server = await listen(http.createServer(handler));
  });
  afterEach(async () => {
    await Promise.all(dispatchers.splice(0).map((entry) => entry.close()));
    await server.close();
  });

  it('refuses 127.0.0.1 by default and never connects', async () => {
    const guarded = dispatcher({ allowed: parseAllowedCidrs('') });
    const error = await refusal(request(`http://127.0.0.1:${server.port}/`, { dispatcher: guarded }));
    expect(error.host).toBe('127.0.0.1');
    expect(error.reason).toBe('127.0.0.1 is a loopback address');
    expect(server.connections()).toBe(0);
  });

  it('refuses [::ffff:127.0.0.1] by default and never connects', async () => {
    const guarded = dispatcher({ allowed: parseAllowedCidrs('') });
    const error = await refusal(
      request(`http://[::ffff:127.0.0.1]:${server.port}/`, { dispatcher: guarded }),
    );
    expect(error.reason).toContain('IPv6 form of a loopback address');
    expect(server.connections()).toBe(0);
  });

  it('reaches the server once 127.0.0.0/8 is allowed', async () => {
    const guarded = dispatcher({ allowed: parseAllowedCidrs('127.0.0.0/8') });
    const response = await request(`http://127.0.0.1:${server.port}/`, { dispatcher: guarded });
    expect(response.statusCode).toBe(200);
    expect(await response.body.text()).toBe('hello from loopback');
    expect(server.connections()).toBe(1);
  });

  it('refuses a made-up name that resolves to loopback (DNS rebinding) without connecting', async () => {
    const resolve = answers('127.0.0.1');
    const guarded = dispatcher({ allowed: parseAllowedCidrs(''), resolve });
    const error = await refusal(
      request(`http://rebind.example.test:${server.port}/`, { dispatcher: guarded }),
    );
    expect(error.host).toBe('rebind.example.test');
    expect(error.reason).toBe('127.0.0.1 is a loopback address');
    expect(resolve.asked).toEqual(['rebind.example.test']);
    expect(server.connections()).toBe(0);
  });

  it('refuses a name when any of its addresses is refused, even if the first is allowed', async () => {
    const resolve = answers('127.0.0.1', '10.0.0.1');
    const guarded = dispatcher({ allowed: parseAllowedCidrs('127.0.0.0/8'), resolve });
    const error = await refusal(
      request(`http://mixed.example.test:${server.port}/`, { dispatcher: guarded }),
    );
    expect(error.reason).toBe('10.0.0.1 is a private address');
    expect(server.connections()).toBe(0);
  });

  it('connects a name to the address it checked', async () => {
    const guarded = dispatcher({ allowed: parseAllowedCidrs('127.0.0.0/8'), resolve: answers('127.0.0.1') });
    const response = await request(`http://named.example.test:${server.port}/`, { dispatcher: guarded });
    expect(await response.body.text()).toBe('hello from loopback');
    expect(server.connections()).toBe(1);
  });

  it('does not follow a redirect', async () => {
    const guarded = dispatcher({ allowed: parseAllowedCidrs('127.0.0.0/8') });
    const response = await request(`http://127.0.0.1:${server.port}/redirect`, { dispatcher: guarded });
    await response.body.dump();
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('http://10.0.0.1/');
  });
});

describe('createTargetDispatcher and TLS verification', () => {
  let server: LocalServer;
  const dispatchers: Dispatcher[] = [];

  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'net-guard-tls-'));
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-subj',
        '/CN=localhost',
        '-days',
        '1',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    server = await listen(https.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, handler));
  });
  afterAll(async () => {
    await Promise.all(dispatchers.map((entry) => entry.close()));
    await server.close();
  });

  it('refuses a self-signed certificate unless rejectUnauthorized is false (verify_ssl)', async () => {
    const allowed = parseAllowedCidrs('127.0.0.0/8');
    const verifying = createTargetDispatcher({ allowed });
    const lenient = createTargetDispatcher({ allowed, rejectUnauthorized: false });
    dispatchers.push(verifying, lenient);
    const url = `https://127.0.0.1:${server.port}/`;
    const failure = await request(url, { dispatcher: verifying }).then(
      () => null,
      (caught: NodeJS.ErrnoException) => caught,
    );
    expect(failure?.code).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
    const response = await request(url, { dispatcher: lenient });
    expect(await response.body.text()).toBe('hello from loopback');
  });

  it('still refuses the address when verification is off', async () => {
    const guarded = createTargetDispatcher({ allowed: parseAllowedCidrs(''), rejectUnauthorized: false });
    dispatchers.push(guarded);
    const before = server.connections();
    await refusal(request(`https://127.0.0.1:${server.port}/`, { dispatcher: guarded }));
    expect(server.connections()).toBe(before);
  });
});
