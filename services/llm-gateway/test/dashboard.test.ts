import { fakeDate, startFakeOpenAi, waitFor, type FakeProviderServer } from '@pack/testkit';
import { admin, consumer, LlmGatewayHarness, startLlmGateway, owner } from './harness';
import { KEY, LOOPBACK, Requester, vendor1Model } from './generate-helpers';

const DASHBOARD = '/v1/ai/dashboard/';

/** Micro-units (1e-6) of a price, written out by hand: 0.15 -> 150000. */
const PRICES = [
  { input: '0.15', output: '0.6', inMicro: 150_000n, outMicro: 600_000n },
  { input: '0.075', output: '0.3', inMicro: 75_000n, outMicro: 300_000n },
  { input: '3', output: '15', inMicro: 3_000_000n, outMicro: 15_000_000n },
];

/** 1e-12 units as a decimal string, independently of the code under test. */
function decimalOfPicoUnits(units: bigint): string {
  const text = units.toString().padStart(13, '0');
  const whole = text.slice(0, -12);
  const fraction = text.slice(-12).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

/** Token counts up to 10^7 that are neither round nor random (the test is repeatable). */
const tokens = (i: number, salt: number) => ((i * 7_919 + salt) * 104_729) % 10_000_000;

describe('the AI Integration dashboard', () => {
  let llm: LlmGatewayHarness;
  let requester: Requester;
  const fakes: FakeProviderServer[] = [];

  beforeAll(async () => {
    // Hours and UTC days are the dashboard's units: the services run on a clock that starts at
    // 12:00:05 UTC on 14 March 2026, so every call falls in that hour and day whenever the test runs.
    fakeDate(new Date('2026-03-14T12:00:05Z'));
    llm = await startLlmGateway({ env: LOOPBACK });
    requester = await Requester.start(llm);
  });
  afterAll(async () => {
    await requester.stop();
    await Promise.all(fakes.map((fake) => fake.close()));
    await llm.stop();
    jest.useRealTimers();
  });

  const dashboard = (query: string, principal = admin) =>
    llm.as(principal, 'GET', query ? `${DASHBOARD}?${query}` : DASHBOARD);

  it('sums many calls exactly per model, with prices 0.15, 0.075 and 3 and up to 10^7 tokens', async () => {
    const from = '2026-03-14T11:00:00Z';
    const CALLS = 20;
    const expected = new Map<number, { cost: bigint; input: number; output: number }>();
    const requests = [];
    for (const [m, price] of PRICES.entries()) {
      const fake = await startFakeOpenAi({ apiKey: KEY });
      fakes.push(fake);
      const model = await vendor1Model(llm, fake, {
        input_price_per_1m_tokens: price.input,
        output_price_per_1m_tokens: price.output,
      });
      const sums = { cost: 0n, input: 0, output: 0 };
      for (let i = 0; i < CALLS; i++) {
        const [input, output] = [tokens(i, m), tokens(i, m + 17)];
        fake.scriptReplies({
          text: 'ok',
          usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
        });
        sums.cost += BigInt(input) * price.inMicro + BigInt(output) * price.outMicro;
        sums.input += input;
        sums.output += output;
        requests.push(requester.request(model, { processor_id: m === 2 ? null : 100 + m }));
      }
      expected.set(model, sums);
    }
    await Promise.all(requests.map((request) => requester.publish(request)));
    await requester.results(requests.map((r) => r.request_id));

    const to = '2026-03-14T13:00:00Z';
    // Rollups are written right after the results are published (0018): wait until all are in.
    const res = await waitFor(
      async () => {
        const read = await dashboard(`from=${from}&to=${to}&group_by=model`);
        return read.body.totals?.calls === 3 * CALLS && read;
      },
      { what: 'every call in the dashboard' },
    );
    expect(res.status).toBe(200);
    expect(res.body.currency).toBe('USD');
    const byModel = res.body.groups as { key: number; cost: string; calls: number }[];
    let total = 0n;
    for (const [model, sums] of expected) {
      total += sums.cost;
      expect(byModel.find((g) => g.key === model)).toMatchObject({
        calls: CALLS,
        errors: 0,
        error_rate: 0,
        input_tokens: sums.input,
        output_tokens: sums.output,
        cost: decimalOfPicoUnits(sums.cost),
        unpriced_calls: 0,
      });
    }
    expect(res.body.totals).toMatchObject({ calls: 3 * CALLS, cost: decimalOfPicoUnits(total) });
    expect(res.body.totals.p50_latency_ms).toEqual(expect.any(Number));
    expect(res.body.totals.p95_latency_ms).toBeGreaterThanOrEqual(res.body.totals.p50_latency_ms);

    // The whole UTC day is read from the day rollups: the same sums.
    const wholeDay = await dashboard('from=2026-03-14&to=2026-03-15&group_by=model');
    expect(wholeDay.body.totals).toEqual(res.body.totals);

    const byProcessor = await dashboard(`from=${from}&to=${to}&group_by=processor`);
    expect(byProcessor.body.groups.map((g: { key: unknown; calls: number }) => [g.key, g.calls])).toEqual([
      [100, CALLS],
      [101, CALLS],
      [null, CALLS],
    ]);
    const byDay = await dashboard(`from=${from}&to=${to}&group_by=day`);
    expect(byDay.body.groups.map((g: { key: string; calls: number }) => [g.key, g.calls])).toEqual([
      ['2026-03-14', 3 * CALLS],
    ]);
  });

  it('sums calls at the highest price exactly, beyond what one 64-bit counter holds, and refuses a higher price', async () => {
    const fake = await startFakeOpenAi({ apiKey: KEY });
    fakes.push(fake);
    const refused = await llm.create(
      {
        name: 'priced above the ceiling',
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        timeout: 5,
        input_price_per_1m_tokens: '1000000.000001',
        output_price_per_1m_tokens: '0.6',
        extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
      },
      admin,
    );
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('input_price_per_1m_tokens');

    // 1,000,000 tokens at 1,000,000 per million: 10^18 units of 1e-12 each; twelve of them are
    // more than 2^63 - 1 (about 9.2 x 10^18).
    const model = await vendor1Model(llm, fake, {
      input_price_per_1m_tokens: '1000000',
      output_price_per_1m_tokens: '0',
    });
    const CALLS = 12;
    const requests = [];
    for (let i = 0; i < CALLS; i++) {
      fake.scriptReplies({
        text: 'ok',
        usage: { prompt_tokens: 1_000_000, completion_tokens: 0, total_tokens: 1_000_000 },
      });
      requests.push(requester.request(model));
    }
    for (const request of requests) await requester.publish(request);
    await requester.results(requests.map((r) => r.request_id));
    const group = await waitFor(
      async () => {
        const read = await dashboard('from=2026-03-14T11:00:00Z&to=2026-03-14T13:00:00Z&group_by=model');
        const mine = (read.body.groups ?? []).find((g: { key: number }) => g.key === model);
        return mine?.calls === CALLS && mine;
      },
      { what: 'the calls at the highest price in the dashboard' },
    );
    expect(group).toMatchObject({ cost: '12000000', currency: 'USD' });
    const wholeDay = await dashboard('from=2026-03-14&to=2026-03-15&group_by=model');
    expect(wholeDay.status).toBe(200);
    expect(wholeDay.body.groups.find((g: { key: number }) => g.key === model)).toMatchObject({
      cost: '12000000',
    });
  });

  it('counts errors and unpriced calls, and shows nothing outside the range', async () => {
    const fake = await startFakeOpenAi({ apiKey: KEY });
    fakes.push(fake);
    const model = await vendor1Model(llm, fake, { input_price_per_1m_tokens: null });
    fake.next({ fault: { kind: 'status', status: 400 } });
    const failed = requester.request(model);
    const unpriced = requester.request(model);
    await requester.publish(failed);
    await requester.results([failed.request_id]);
    await requester.publish(unpriced);
    await requester.results([unpriced.request_id]);
    const since = '2026-03-14T12:00:00Z';
    const res = await waitFor(
      async () => {
        const read = await dashboard(`from=${since}&group_by=model`);
        return read.body.groups.find((g: { key: number }) => g.key === model)?.calls === 2 && read;
      },
      { what: 'both calls in the dashboard' },
    );
    expect(res.body.groups.find((g: { key: number }) => g.key === model)).toMatchObject({
      calls: 2,
      errors: 1,
      error_rate: 0.5,
      unpriced_calls: 1,
      cost: '0',
    });
    const earlier = await dashboard('from=2020-01-01&to=2020-01-02');
    expect(earlier.body).toMatchObject({ totals: { calls: 0, cost: '0', p50_latency_ms: null }, groups: [] });
  });

  it('is for admins and service owners', async () => {
    expect((await dashboard('', owner)).status).toBe(200);
    expect((await dashboard('', consumer)).status).toBe(403);
    expect((await llm.as(null, 'GET', DASHBOARD)).status).toBe(401);
  });

  it.each([
    ['from=yesterday', 'from'],
    ['to=2026-13-01', 'to'],
    ['group_by=week', 'group_by'],
    ['from=2026-11-02&to=2026-11-01', 'from'],
    ['from=2020-01-01&to=2026-01-01', 'from'],
    ['size=3', 'size'],
  ])('refuses %s with a 400 naming %s', async (query, field) => {
    const res = await dashboard(query);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.errors as object)).toContain(`query.${field}`);
  });
});
