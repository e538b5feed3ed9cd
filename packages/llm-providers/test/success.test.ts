import { headerOf } from '@pack/testkit';
import { HELLO, KEY, setups, type Setup } from './setups';

describe('successful generation: the wire request and the usage mapping', () => {
  let s: Setup | undefined;
  afterEach(() => s?.fake.close());

  it('vendor1 sends a chat completion with the bearer key and maps cached and reasoning tokens', async () => {
    s = await setups.vendor1();
    s.fake.reply = {
      text: 'Hello!',
      usage: {
        prompt_tokens: 2006,
        completion_tokens: 300,
        total_tokens: 2306,
        prompt_tokens_details: { cached_tokens: 1920 },
        completion_tokens_details: { reasoning_tokens: 256 },
      },
    };
    const out = await s.adapter().generate({ model: 'gpt-4o-mini', messages: HELLO, maxOutputTokens: 64 });
    expect(out.text).toBe('Hello!');
    expect(out.usage).toMatchObject({
      input_tokens: 2006,
      output_tokens: 300,
      cached_input_tokens: 1920,
      reasoning_tokens: 256,
    });
    expect(out.usage.raw).toMatchObject({ total_tokens: 2306 });
    expect(out.latency_ms).toBeGreaterThanOrEqual(0);
    const [req] = s.fake.requestsTo('/v1/chat/completions');
    expect(headerOf(req!, 'authorization')).toBe(`Bearer ${KEY}`);
    expect(req!.body).toEqual({ model: 'gpt-4o-mini', messages: HELLO, max_completion_tokens: 64 });
  });

  it('vendor2 puts the system prompt in system and counts cache reads and writes as input', async () => {
    s = await setups.vendor2();
    s.fake.reply = {
      text: 'Hi there',
      usage: {
        input_tokens: 50,
        output_tokens: 20,
        cache_creation_input_tokens: 1000,
        cache_read_input_tokens: 400,
      },
    };
    const out = await s
      .adapter()
      .generate({ model: 'claude-sonnet-4-5', messages: HELLO, maxOutputTokens: 32 });
    expect(out.text).toBe('Hi there');
    expect(out.usage).toMatchObject({ input_tokens: 1450, output_tokens: 20, cached_input_tokens: 400 });
    const [req] = s.fake.requestsTo('/v1/messages');
    expect(headerOf(req!, 'x-api-key')).toBe(KEY);
    expect(headerOf(req!, 'anthropic-version')).toBe('2023-06-01');
    expect(headerOf(req!, 'authorization')).toBeUndefined();
    expect(req!.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 32,
      system: 'Answer briefly.',
      messages: [{ role: 'user', content: 'Say hello.' }],
    });
  });

  it('vendor3 sends systemInstruction and contents and bills thinking tokens as output', async () => {
    s = await setups.vendor3();
    s.fake.reply = {
      text: 'Hello from Gemini',
      usage: {
        promptTokenCount: 120,
        candidatesTokenCount: 15,
        thoughtsTokenCount: 85,
        cachedContentTokenCount: 100,
        totalTokenCount: 220,
      },
    };
    const out = await s.adapter().generate({
      model: 'gemini-2.5-flash',
      messages: [...HELLO, { role: 'assistant', content: 'Hello?' }, { role: 'user', content: 'Again.' }],
      maxOutputTokens: 256,
    });
    expect(out.text).toBe('Hello from Gemini');
    expect(out.usage).toMatchObject({
      input_tokens: 120,
      output_tokens: 100,
      cached_input_tokens: 100,
      reasoning_tokens: 85,
    });
    const [req] = s.fake.requestsTo(':generateContent');
    expect(req!.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(headerOf(req!, 'x-goog-api-key')).toBe(KEY);
    expect(req!.body).toEqual({
      systemInstruction: { parts: [{ text: 'Answer briefly.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Say hello.' }] },
        { role: 'model', parts: [{ text: 'Hello?' }] },
        { role: 'user', parts: [{ text: 'Again.' }] },
      ],
      generationConfig: { maxOutputTokens: 256 },
    });
  });

  it('vendor3 leaves a blank system text out: Gemini refuses an empty part', async () => {
    s = await setups.vendor3();
    const out = await s.adapter().generate({
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'system', content: ' ' },
        { role: 'user', content: 'Say hello.' },
      ],
    });
    expect(out.text).toBe(s.fake.reply.text);
    const [req] = s.fake.requestsTo(':generateContent');
    expect(req!.body).toEqual({ contents: [{ role: 'user', parts: [{ text: 'Say hello.' }] }] });
  });

  it('vendor3 treats a blocked prompt and a safety stop as failures', async () => {
    s = await setups.vendor3();
    s.fake.next({
      fault: { kind: 'body', status: 200, body: { promptFeedback: { blockReason: 'SAFETY' } } },
    });
    await expect(s.adapter().generate({ model: 'g', messages: HELLO })).rejects.toMatchObject({
      kind: 'error_body',
      message: expect.stringContaining('SAFETY'),
    });
    s.fake.next({
      fault: {
        kind: 'body',
        status: 200,
        body: { candidates: [{ content: { parts: [{ text: 'partial' }] }, finishReason: 'RECITATION' }] },
      },
    });
    await expect(s.adapter().generate({ model: 'g', messages: HELLO })).rejects.toMatchObject({
      kind: 'error_body',
      message: expect.stringContaining('RECITATION'),
    });
  });

  it('genai merges request_payload with the messages and reads an OpenAI-compatible reply', async () => {
    s = await setups.genai();
    s.fake.reply = {
      text: 'Enterprise hello',
      usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
    };
    const out = await s.adapter().generate({ model: 'corp-llm', messages: HELLO });
    expect(out.text).toBe('Enterprise hello');
    expect(out.usage).toMatchObject({ input_tokens: 9, output_tokens: 4 });
    const [req] = s.fake.requestsTo('/chat');
    expect(headerOf(req!, 'authorization')).toMatch(/^Bearer tok_/);
    expect(req!.body).toEqual({ model: 'corp-llm', temperature: 0, messages: HELLO });
  });

  it('vendor1_assistant runs the assistant on a thread and reads its reply and the run usage', async () => {
    s = await setups.vendor1_assistant();
    s.fake.reply = {
      text: 'Assistant says hi',
      usage: { prompt_tokens: 30, completion_tokens: 9, total_tokens: 39 },
    };
    const out = await s.adapter().generate({ model: 'gpt-4o', messages: HELLO });
    expect(out.text).toBe('Assistant says hi');
    expect(out.usage).toMatchObject({ input_tokens: 30, output_tokens: 9 });
    const [thread] = s.fake.requestsTo('/v1/threads');
    expect(headerOf(thread!, 'openai-beta')).toBe('assistants=v2');
    expect(headerOf(thread!, 'authorization')).toBe(`Bearer ${KEY}`);
    expect(thread!.body).toEqual({ messages: [{ role: 'user', content: 'Say hello.' }] });
    const run = s.fake.requests.find((r) => r.method === 'POST' && r.path.endsWith('/runs'));
    // The profile's model_name goes with the run: it overrides the assistant's own model.
    expect(run!.body).toEqual({
      assistant_id: 'asst_fake',
      model: 'gpt-4o',
      additional_instructions: 'Answer briefly.',
    });
  });
});
