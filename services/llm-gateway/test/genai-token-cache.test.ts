import { startFakeGenai } from '@pack/testkit';
import { admin, MODELS, startLlmGateway, type LlmGatewayHarness } from './harness';

const CREDENTIALS = 'Basic dG9rZW4tY2FjaGU6U0VDUkVULXBhc3N3b3Jk';

describe("a replica's genai access tokens", () => {
  let llm: LlmGatewayHarness;
  let genai: Awaited<ReturnType<typeof startFakeGenai>>;

  beforeAll(async () => {
    genai = await startFakeGenai({ credentials: CREDENTIALS });
    llm = await startLlmGateway({ env: { PACK_ALLOWED_TARGET_CIDRS: '127.0.0.0/8,::1/128' } });
  });
  afterAll(async () => {
    await genai.close();
    await llm.stop();
  });

  it('are fetched once and reused by every later call of the model, until shortly before they expire', async () => {
    const created = await llm.create({
      name: 'genai shared token',
      provider: 'genai',
      model_name: 'm',
      timeout: 10,
      extra_data: {
        token_url: genai.tokenUrl,
        request_url: genai.requestUrl,
        credentials: CREDENTIALS,
        verify_ssl: true,
        request_payload: {},
      },
    });
    expect(created.status).toBe(201);
    const id = (created.body as { id: number }).id;
    for (let i = 0; i < 3; i += 1) {
      const res = await llm.as(admin, 'POST', `${MODELS}test_connection/${id}/`, {});
      expect(res.status).toBe(200);
    }
    // Each test makes its own adapter: the token survives only in the cache the replica hands them.
    expect(genai.control.issued).toBe(1);
  });
});
