import { startFakeAssistants } from '@pack/testkit';
import { createAdapter, ProviderErrorBodyError, ProviderTimeoutError } from '../src';
import { HELLO, KEY } from './setups';

type Fake = Awaited<ReturnType<typeof startFakeAssistants>>;

describe('vendor1_assistant runs', () => {
  let fake: Fake;
  beforeEach(async () => {
    fake = await startFakeAssistants({ apiKey: KEY, assistantId: 'asst_1' });
  });
  afterEach(() => fake.close());

  const adapter = (timeout = 5) =>
    createAdapter(
      {
        provider: 'vendor1_assistant',
        VENDOR1_API_KEY: KEY,
        VENDOR1_ASSISTANT_ID: 'asst_1',
        base_url: `${fake.url}/v1`,
      },
      { timeout, pollIntervalMs: 5 },
    );
  const failureOf = (timeout?: number) =>
    adapter(timeout)
      .generate({ model: 'gpt-4o', messages: HELLO })
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
  const polls = () => fake.requests.filter((r) => r.method === 'GET' && /\/runs\/[^/]+$/.test(r.path));

  it('polls the run until it completes, then reads the reply of that run', async () => {
    fake.script.pollsBeforeEnd = 4;
    fake.reply = { text: 'done after polling' };
    const out = await adapter().generate({ model: 'gpt-4o', messages: HELLO });
    expect(out.text).toBe('done after polling');
    expect(polls()).toHaveLength(5);
    const list = fake.requests.find((r) => r.path.includes('/messages'));
    expect(list!.path).toMatch(/run_id=run_/);
  });

  it('a failed run is a failure with the run error', async () => {
    fake.script.status = 'failed';
    fake.script.lastError = { code: 'rate_limit_exceeded', message: 'You exceeded your current quota.' };
    const err = await failureOf();
    expect(err).toBeInstanceOf(ProviderErrorBodyError);
    expect(err!.message).toContain('failed');
    expect(err!.message).toContain('exceeded your current quota');
    expect(fake.requests.some((r) => r.path.includes('/messages'))).toBe(false);
  });

  it('an expired run is a failure', async () => {
    fake.script.status = 'expired';
    const err = await failureOf();
    expect(err).toBeInstanceOf(ProviderErrorBodyError);
    expect(err!.message).toContain('expired');
  });

  it('a run that never ends within the timeout stops polling at the deadline', async () => {
    // The run never ends: only the deadline can end the call.
    fake.script.pollsBeforeEnd = 1_000_000;
    const err = await failureOf(0.5);
    expect(err).toBeInstanceOf(ProviderTimeoutError);
    expect(polls().length).toBeGreaterThan(1);
  });

  it('an unknown assistant id is the provider 404 message', async () => {
    const err = await createAdapter(
      {
        provider: 'vendor1_assistant',
        VENDOR1_API_KEY: KEY,
        VENDOR1_ASSISTANT_ID: 'asst_nope',
        base_url: `${fake.url}/v1`,
      },
      { timeout: 5 },
    )
      .generate({ model: 'gpt-4o', messages: HELLO })
      .then(
        () => undefined,
        (e: unknown) => e as Error,
      );
    expect(err).toMatchObject({ status: 404, message: expect.stringContaining('No assistant found') });
  });
});
