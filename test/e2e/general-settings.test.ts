import { SETTINGS_GROUPS } from '@pack/contracts';
import { call } from '@pack/testkit';
import { startStack, type Stack } from '../stack';

describe('GET /v1/core/general_settings/ through the gateway', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('answers every group of spec 2.8 with its defaults to a signed-in user, the AI switches on: "show_ai_integration (calculated automatically: true if any AI feature is enabled)"', async () => {
    const { status, body, headers } = await stack.call('GET', '/v1/core/general_settings/');
    expect(status).toBe(200);
    expect(headers.get('x-request-id')).toBeTruthy();
    expect(Object.keys(body).sort()).toEqual([...SETTINGS_GROUPS].sort());
    expect(body.currency).toEqual({ ENABLED: true, currency: 'USD' });
    expect(body.ldap).toEqual({
      ENABLED: false,
      SERVER_URI: '',
      BIND_DN: '',
      BIND_PASSWORD: '',
      USER_SEARCH_BASE_DN: '',
      GROUP_SEARCH_QUERY_BASE_DN: '',
    });
    expect(body.oauth).toEqual({ ENABLED: false, CLIENT_ID: '', ISSUER_URL: '', REDIRECT_BASE_URL: '' });
    // The AI switches are on by default (DESIGN section 9), so "show_ai_integration (calculated
    // automatically: true if any AI feature is enabled)" is true on a fresh install.
    expect(body.ai_integration).toMatchObject({
      show_ai_validator: true,
      show_ai_processor: true,
      show_ai_integration: true,
    });
    expect(body.external_api).toEqual({
      healthcheck_rate_limit_per_minute: 60,
      healthcheck_response_rate_limit: 60,
      webhook_rate_limit_per_minute: 60,
      webhook_response_rate_limit: 120,
      webhook_response_retention: 100,
    });
  });

  it('refuses a request without a token, or with an unknown one, with 401 problem+json', async () => {
    for (const token of [null, 'pack_unknownunknownunknownunknown']) {
      const { status, body, headers } = await stack.call('GET', '/v1/core/general_settings/', { token });
      expect(status).toBe(401);
      expect(headers.get('content-type')).toContain('application/problem+json');
      expect(body).toMatchObject({ status: 401, title: 'Authentication required' });
    }
  });

  it('is refused by a service reached past the gateway with made-up principal headers', async () => {
    const forged = Buffer.from(JSON.stringify({ id: 1, username: 'admin', role: 'admin' })).toString(
      'base64url',
    );
    const response = await call(stack.urls.settings!, 'GET', '/v1/core/general_settings/', {
      headers: {
        'x-pack-principal': forged,
        'x-pack-timestamp': String(Date.now()),
        'x-pack-signature': 'made-up',
      },
    });
    expect(response.status).toBe(401);
  });

  it('answers 404 problem+json for a path nobody owns', async () => {
    const { status, body } = await stack.call('GET', '/v1/nothing/here/');
    expect(status).toBe(404);
    expect(body).toMatchObject({ status: 404, type: expect.stringContaining('not-found') });
  });
});
