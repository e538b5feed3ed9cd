import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@pack/testkit';
import { startStack, type Stack } from '../stack';

const HOOKS = '/v1/external/serviceowner/webhooks/';

/**
 * A fire that was never sent: spec 2.7's response_body is what the target returned,
 * so the dispatcher's own reason is a separate `error`, and response_body stays null.
 */
describe('a webhook fire that was never sent, through the gateway', () => {
  let stack: Stack;
  let server: http.Server;
  let target = '';
  let calls = 0;

  beforeAll(async () => {
    // The first request is answered 503 with Retry-After: the fire waits 2 s for its next attempt.
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        calls += 1;
        res.writeHead(503, { 'retry-after': '2', 'content-type': 'text/plain' });
        res.end('busy, come back later');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    target = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("spec 2.7: response_body is the target's answer; a fire never sent has none, and says why in error", async () => {
    const [owner, consumer] = [await stack.issueToken('service_owner'), await stack.issueToken('consumer')];
    const service = await stack.call('POST', '/v1/catalog/services/', {
      token: owner,
      body: { name: 'Disabled before its retry', description: '' },
    });
    expect(service.status).toBe(201);
    const hook = await waitFor(async () => {
      const reply = await stack.call('POST', HOOKS, {
        token: owner,
        body: { name: 'Retried', description: '', service: service.body.id, target_url: target },
      });
      return reply.status === 201 ? reply.body : undefined;
    });
    const submitted = await stack.call('POST', `/v1/catalog/services/${service.body.id}/declarations/`, {
      token: consumer,
      body: { declaration: { size: 'small' } },
    });
    expect(submitted.status).toBe(201);
    await waitFor(() => calls >= 1 || undefined, { what: 'the first attempt' });
    const disabled = await stack.call('PATCH', `${HOOKS}${hook.id}/`, {
      token: owner,
      body: { enabled: false },
    });
    expect(disabled.status).toBe(200);

    const failed = await waitFor(
      async () => {
        const reply = await stack.call('GET', `${HOOKS}${hook.id}/responses/`, { token: owner });
        return reply.body.results?.[0]?.state === 'FAILED' ? reply.body.results[0] : undefined;
      },
      { what: 'the fire FAILED' },
    );
    expect(failed).toMatchObject({
      status_code: null,
      response_body: null,
      error: 'the webhook is disabled',
    });
    expect(failed.attempts).toHaveLength(1);
    expect(failed.attempts[0]).toMatchObject({ status_code: 503 });
    expect(calls).toBe(1);
  });
});
