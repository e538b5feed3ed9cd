import { createServer } from 'node:net';
import { loadConfig } from '@pack/config';
import { gatewayEnvSchema, gatewayService } from '@pack/gateway';
import { startService } from '@pack/runtime';
import { openApiProblems, stopAndClean, testEnv } from '@pack/testkit';
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
    // Every public prefix the gateway forwards, and the service that answers it (DESIGN section 1);
    // the gateway itself answers the test mail under the settings prefix (0016).
    const forwardedPrefixes = [
      ['/v1/core/general_settings/', 'gateway', 'settings'],
      ['/v1/catalog/', 'catalog'],
      ['/v1/ai/llm_models/', 'llm-gateway'],
      ['/v1/ai/dashboard/', 'llm-gateway'],
      ['/v1/ai/processors/', 'pipeline-orchestrator'],
      ['/v1/external/serviceowner/pack/', 'pipeline-orchestrator'],
      ['/v1/external/serviceowner/webhooks/', 'webhook-dispatcher'],
      ['/v1/external/serviceowner/webhook_responses/', 'webhook-dispatcher'],
    ] as const;
    const { body } = await stack.call('GET', '/v1/openapi.json', { token: null });
    for (const [prefix, ...upstreams] of forwardedPrefixes) {
      const tags = new Set<string>();
      for (const [path, item] of Object.entries(body.paths as Record<string, Record<string, any>>))
        if (path.startsWith(prefix))
          for (const operation of Object.values(item)) tags.add(operation.tags?.[0]);
      // Documented, and by the service the prefix is forwarded to.
      expect({ prefix, tags: [...tags].sort() }).toEqual({ prefix, tags: upstreams });
    }
  });

  it('names no missing service and tags each operation with its service when all six run', async () => {
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

  it('names the services it could not reach instead of failing, and leaves out their paths', async () => {
    // A second gateway in front of the same services, but with the webhook dispatcher's address
    // pointing at a loopback port nothing listens on.
    const gateway = await startService(
      gatewayService,
      loadConfig(
        gatewayEnvSchema,
        testEnv('gateway', {
          SETTINGS_URL: stack.urls.settings!,
          CATALOG_URL: stack.urls.catalog!,
          LLM_GATEWAY_URL: stack.urls['llm-gateway']!,
          PIPELINE_ORCHESTRATOR_URL: stack.urls['pipeline-orchestrator']!,
          WEBHOOK_DISPATCHER_URL: await closedLoopbackUrl(),
          PACK_ADMIN_TOKEN: stack.adminToken,
        }),
      ),
    );
    try {
      await gateway.started;
      const answer = await fetch(`${gateway.url}/v1/openapi.json`);
      expect(answer.status).toBe(200);
      const body = (await answer.json()) as any;
      expect(body['x-missing-services']).toEqual(['webhook-dispatcher']);
      expect(body.info.description).toContain('Left out now, as they did not answer: webhook-dispatcher.');
      expect(body.paths['/v1/external/serviceowner/webhooks/{id}/trigger/']).toBeUndefined();
      expect(Object.keys(body.paths).filter((path) => path.includes('/webhooks'))).toEqual([]);
      expect(body.paths['/v1/catalog/services/{id}/'].patch.tags).toEqual(['catalog']);
      expect(body.paths['/v1/ai/processors/{id}/'].patch.tags).toEqual(['pipeline-orchestrator']);
    } finally {
      await stopAndClean(gateway);
    }
  });

  it('takes the same text as the server: a name or owner name of white space only refused by both, spaces not counted in the length', async () => {
    const document = await stack.openApi();
    const me = (await stack.call('GET', '/v1/core/me/')).body as { id: number };
    const verdicts = async (body: Record<string, unknown>) => {
      const answer = await stack.call('POST', '/v1/catalog/services/', { body });
      return {
        body,
        document: document.takesBody('POST /v1/catalog/services/', body),
        server: answer.status === 201,
      };
    };
    const cases: [Record<string, unknown>, boolean][] = [
      [{ name: '  Agreed  ', owner: { id: me.id, name: ' Admin ' } }, true],
      [{ name: 'Agreed', owner: { id: me.id, name: '   ' } }, false],
      [{ name: 'Agreed', owner: { id: me.id, name: '\u3000\t' } }, false],
      [{ name: ' \u00a0 ' }, false],
      // 199 characters and two spaces: over the documented 200 as sent.
      [{ name: ` ${'x'.repeat(199)} ` }, false],
    ];
    for (const [body, taken] of cases)
      expect(await verdicts(body)).toEqual({ body, document: taken, server: taken });
  });

  it('takes the same new model as the server: a masked secret (nothing stored to keep) refused by both', async () => {
    const document = await stack.openApi();
    let models = 0;
    const verdicts = async (apiKey: string) => {
      // The name never carries the key: the leak scan would find it in the change's log line.
      models += 1;
      const body = {
        name: `Agreed ${models}`,
        provider: 'vendor1',
        model_name: 'm',
        extra_data: { api_key: apiKey, base_url: null },
      };
      const answer = await stack.call('POST', '/v1/ai/llm_models/', { body });
      return {
        apiKey,
        document: document.takesBody('POST /v1/ai/llm_models/', body),
        server: answer.status === 201,
      };
    };
    for (const [apiKey, taken] of [
      ['sk-agreed-0000000000', true],
      ['********', false],
      ['********9876', false],
      ['*********9876', true],
    ] as const)
      expect(await verdicts(apiKey)).toEqual({ apiKey, document: taken, server: taken });
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

/** The URL of a loopback port that was just free (opened, then closed again): nothing answers there. */
async function closedLoopbackUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
