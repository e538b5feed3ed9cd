import { ROUTING_TABLE } from '@pack/gateway';
import { openApiProblems } from '@pack/testkit';
import { startStack, type Stack } from '../stack';

/**
 * Prefixes forwarded to a running service that does not serve them yet. Webhook responses are
 * served under /v1/external/serviceowner/webhooks/<id>/responses/ (0014).
 */
/** The API reference as a user of the running platform meets it: /v1/openapi.json and /v1/docs/. */
describe('the API reference', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('is a valid OpenAPI 3.1 document, without a token, whose every schema compiles', async () => {
    const { status, body, headers } = await stack.call('GET', '/v1/openapi.json', { token: null });
    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/^application\/json/);
    expect(await openApiProblems(body)).toEqual({ version: '3.1', errors: [] });
    expect((await stack.openApi()).compileAll()).toBeGreaterThan(50);
  });

  it('documents every route of every running service, and every prefix the gateway forwards to one', async () => {
    const documented = new Set((await stack.openApi()).operations());
    const running = [['gateway', stack.gateway], ...Object.entries(stack.urls)] as const;
    for (const [name, url] of running) {
      const service = stack.services.find((candidate) => candidate.url === url)!;
      const declared = service.routes.map(
        (route) => `${route.method.toUpperCase()} ${route.path.replace(/:(\w+)/g, '{$1}')}`,
      );
      expect({ name, missing: declared.filter((operation) => !documented.has(operation)) }).toEqual({
        name,
        missing: [],
      });
      expect(declared.length).toBeGreaterThan(0);
    }
    const runningNames = new Set(Object.keys(stack.urls));
    const forwardedPrefixes = ROUTING_TABLE.filter(([, upstream]) => runningNames.has(upstream));
    expect(forwardedPrefixes.length).toBeGreaterThanOrEqual(2);
    for (const [prefix, upstream] of forwardedPrefixes) {
      const under = [...documented].filter((operation) => operation.split(' ')[1]!.startsWith(prefix));
      expect({ prefix, upstream, documented: under.length > 0 }).toEqual({
        prefix,
        upstream,
        documented: true,
      });
    }
  });

  it('names the services it could not reach instead of failing (none: all six run)', async () => {
    const { body } = await stack.call('GET', '/v1/openapi.json', { token: null });
    expect(body['x-missing-services']).toEqual([]);
    expect(body.paths['/v1/catalog/services/{id}/'].patch.tags).toEqual(['catalog']);
    expect(body.paths['/v1/core/general_settings/'].get.tags).toEqual(['settings']);
    expect(body.paths['/v1/ai/llm_models/{id}/'].patch.tags).toEqual(['llm-gateway']);
    expect(body.paths['/v1/ai/processors/{id}/'].patch.tags).toEqual(['pipeline-orchestrator']);
    expect(body.paths['/v1/external/serviceowner/webhooks/{id}/trigger/'].post.tags).toEqual([
      'webhook-dispatcher',
    ]);
    expect(body.paths['/v1/core/tokens/'].post.security).toEqual([{ Token: [] }]);
    expect(body.paths['/v1/openapi.json'].get.security).toEqual([]);
  });

  it('serves a reference page at /v1/docs/ that loads only files of its own origin', async () => {
    const page = await stack.call('GET', '/v1/docs/', { token: null });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    // Only 'self' and data: images; no host of any kind.
    expect(csp.replace(/'[a-z-]+'|data:|[a-z-]+-(src|uri|action|ancestors)|;/g, '').trim()).toBe('');

    const references = [...String(page.body).matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    expect(references).toEqual(expect.arrayContaining(['swagger-ui.css', 'swagger-ui-bundle.js', 'init.js']));
    const pageUrl = `${stack.gateway}/v1/docs/`;
    for (const reference of references) {
      const url = new URL(reference, pageUrl);
      expect({ reference, origin: url.origin }).toEqual({ reference, origin: new URL(stack.gateway).origin });
      const asset = await stack.call('GET', url.pathname, { token: null });
      expect({ reference, status: asset.status }).toEqual({ reference, status: 200 });
      expect(String(asset.body).length).toBeGreaterThan(100);
    }
    // The page's script finds the document next to it.
    const init = await stack.call('GET', '/v1/docs/init.js', { token: null });
    expect(init.body).toContain("'../openapi.json'");
    expect(init.body).toContain('validatorUrl: null');

    expect((await stack.call('GET', '/v1/docs/..%2Fservice.ts', { token: null })).status).toBe(404);
    expect((await stack.call('GET', '/v1/docs/package.json', { token: null })).status).toBe(404);
    const bare = await fetch(`${stack.gateway}/v1/docs`, { redirect: 'manual' });
    expect(bare.status).toBe(301);
    expect(new URL(bare.headers.get('location')!, `${stack.gateway}/v1/docs`).pathname).toBe('/v1/docs/');
  });
});
