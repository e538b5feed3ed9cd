import { principalHeaders } from '@pack/http-kit';
import { startFakeOpenAi } from '@pack/testkit';
import type { GatewayDriver } from './gateway-driver';
import { drive, type Figures } from './measure';

/** What a call answered by its first fallback after the asked model's HTTP 500 costs. */
export interface FallbackFigures {
  /** Each on a fresh asked model (breaker closed): 3 attempts answered 500, with backoff, then the fallback. */
  afterRetriesMs: number[];
  /** Driven on one asked model: after its first failures its breaker is open and calls go to the fallback at once. */
  breakerOpen: { concurrency: number; figures: Figures }[];
}

/**
 * FALLBACK=1 in run.ts: an asked model on a provider that answers every call with HTTP 500, its
 * fallback on the bench's instant provider (docs/decisions/0045).
 */
export async function fallbackFigures(options: {
  gatewayUrl: string;
  secret: string;
  key: string;
  okProviderUrl: string;
  driver: GatewayDriver;
  duration: number;
}): Promise<FallbackFigures> {
  const { gatewayUrl, secret, key, driver } = options;
  const failing = await startFakeOpenAi({ apiKey: key });
  failing.requests.push = () => 0;
  failing.always({ fault: { kind: 'status', status: 500 } });
  let created = 0;
  const model = async (providerUrl: string, fallbacks: number[]) => {
    created += 1;
    const answer = await fetch(`${gatewayUrl}/v1/ai/llm_models/`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...principalHeaders(secret, 'POST', '/v1/ai/llm_models/', {
          id: 1,
          username: 'bench',
          role: 'admin',
        }),
      },
      body: JSON.stringify({
        name: `bench fallback model ${created}`,
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        input_price_per_1m_tokens: '1',
        output_price_per_1m_tokens: '2',
        fallback_models: fallbacks,
        extra_data: { api_key: key, base_url: `${providerUrl}/v1` },
      }),
    });
    if (answer.status !== 201) throw new Error(`creating a bench fallback model answered ${answer.status}`);
    return ((await answer.json()) as { id: number }).id;
  };
  try {
    const fallback = await model(options.okProviderUrl, []);
    const afterRetriesMs: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const asked = await model(failing.url, [fallback]);
      const began = performance.now();
      await driver.call(asked);
      afterRetriesMs.push(performance.now() - began);
    }
    const asked = await model(failing.url, [fallback]);
    const breakerOpen = [];
    for (const concurrency of [1, 10])
      breakerOpen.push({
        concurrency,
        figures: await drive(() => driver.call(asked), concurrency, options.duration, 10),
      });
    return { afterRetriesMs, breakerOpen };
  } finally {
    await failing.close();
  }
}

export function fallbackReport(figures: FallbackFigures): string {
  const sorted = [...figures.afterRetriesMs].sort((a, b) => a - b);
  const lines = [
    `fallback after HTTP 500 (fresh model, breaker closed: 3 attempts with backoff, then the fallback): ` +
      `median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms of ${sorted.map((ms) => ms.toFixed(0)).join(', ')} ms`,
    ...figures.breakerOpen.map(
      ({ concurrency, figures: f }) =>
        `fallback with the asked model's breaker open, concurrency ${concurrency}: ${f.callsPerSecond.toFixed(0)} calls/s, ` +
        `p50 ${f.p50.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms, ${f.errors} errors`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
