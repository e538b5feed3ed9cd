import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROLES } from '@pack/contracts';
import { call, FakeSettings } from '@pack/testkit';
import { startGateway, type GatewayHarness } from './harness';

const INDEX =
  '<!doctype html><html lang="en"><title>console</title><script type="module" src="/assets/app-1a2b.js"></script></html>';
const SCRIPT = 'console.log("console");';

/** The console as the gateway serves it, from a build folder made here, and GET /v1/core/me/. */
describe('gateway: the operator console and who-am-I', () => {
  const adminToken = `pack_${randomBytes(32).toString('base64url')}`;
  const settings = new FakeSettings();
  const dist = mkdtempSync(path.join(tmpdir(), 'console-dist-'));
  let gateway: GatewayHarness;
  let unbuilt: GatewayHarness;

  beforeAll(async () => {
    mkdirSync(path.join(dist, 'assets'));
    writeFileSync(path.join(dist, 'index.html'), INDEX);
    writeFileSync(path.join(dist, 'assets', 'app-1a2b.js'), SCRIPT);
    writeFileSync(path.join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    await settings.start();
    const start = (consoleDir: string) =>
      startGateway({
        env: { PACK_ADMIN_TOKEN: adminToken, SETTINGS_URL: settings.url, CONSOLE_DIST_DIR: consoleDir },
      });
    [gateway, unbuilt] = await Promise.all([start(dist), start(path.join(dist, 'nothing-here'))]);
  });

  afterAll(async () => {
    await gateway.stop();
    await unbuilt.stop();
    await settings.stop();
    rmSync(dist, { recursive: true, force: true });
  });

  /** Nothing but the gateway's own files (and data: images); no inline script or style, no framing. */
  const CSP =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
  const expectConsoleHeaders = (headers: Headers) => {
    expect(headers.get('content-security-policy')).toBe(CSP);
    expect(headers.get('x-content-type-options')).toBe('nosniff');
    expect(headers.get('referrer-policy')).toBe('no-referrer');
  };

  it('serves index.html at / and at every console page, revalidated on each load, under a strict CSP', async () => {
    for (const page of ['/', '/models', '/models/12', '/change-instances', '/sign-in?next=%2Fwebhooks']) {
      const answer = await call(gateway.url, 'GET', page);
      expect({ page, status: answer.status, body: answer.text }).toEqual({ page, status: 200, body: INDEX });
      expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(answer.headers.get('cache-control')).toBe('no-cache');
      expectConsoleHeaders(answer.headers);
    }
    const etag = (await call(gateway.url, 'GET', '/')).headers.get('etag')!;
    const again = await call(gateway.url, 'GET', '/', { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    const head = await call(gateway.url, 'HEAD', '/dashboard');
    expect([head.status, head.text]).toEqual([200, '']);
  });

  it('serves hashed assets as immutable for a year, other files of the build as revalidated', async () => {
    const script = await call(gateway.url, 'GET', '/assets/app-1a2b.js');
    expect([script.status, script.text]).toEqual([200, SCRIPT]);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expectConsoleHeaders(script.headers);
    const icon = await call(gateway.url, 'GET', '/favicon.svg');
    expect([icon.status, icon.headers.get('cache-control')]).toEqual([200, 'no-cache']);
  });

  it('leaves every other path as it was: the API, its reference, health, unknown paths, escapes', async () => {
    const docs = await call(gateway.url, 'GET', '/v1/docs/');
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect((await call(gateway.url, 'GET', '/healthz')).status).toBe(200);
    expect((await call(gateway.url, 'GET', '/openapi.json')).status).toBe(200);
    for (const other of [
      '/nope',
      '/assets/missing.js',
      '/assets/../index.html',
      '/%2e%2e/package.json',
      '/v1/x/',
    ]) {
      const answer = await call(gateway.url, 'GET', other);
      expect({ other, status: answer.status }).toEqual({ other, status: 404 });
      expect(answer.headers.get('content-type')).toContain('application/problem+json');
    }
    const posted = await call(gateway.url, 'POST', '/models', { body: {} });
    expect(posted.status).toBe(404);
  });

  it('says how to build the console when there is no build, never a 500', async () => {
    for (const page of ['/', '/settings']) {
      const answer = await call(unbuilt.url, 'GET', page);
      expect(answer.status).toBe(503);
      expect(answer.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(answer.text).toContain('pnpm --filter @pack/console build');
    }
    expect((await call(unbuilt.url, 'GET', '/assets/app-1a2b.js')).status).toBe(404);
  });

  it('GET /v1/core/me/ answers the caller with its role, for every role, and 401 without a valid token', async () => {
    for (const token of [null, 'pack_unknown_token_0000000000000000000000000000000']) {
      const refused = await call(gateway.url, 'GET', '/v1/core/me/', { token });
      expect(refused.status).toBe(401);
      expect(refused.headers.get('content-type')).toContain('application/problem+json');
    }
    const admin = await call(gateway.url, 'GET', '/v1/core/me/', { token: adminToken });
    expect(admin).toMatchObject({ status: 200, body: { username: 'admin', role: 'admin' } });
    for (const role of ROLES) {
      const username = `me-${role}-${randomBytes(4).toString('hex')}`;
      const issued = await call(gateway.url, 'POST', '/v1/core/tokens/', {
        token: adminToken,
        body: { username, role },
      });
      expect(issued.status).toBe(201);
      const me = await call(gateway.url, 'GET', '/v1/core/me/', { token: issued.body.token });
      expect(me).toMatchObject({ status: 200, body: { id: issued.body.user.id, username, role } });
    }
  });
});
