import { mongo, type Connection } from 'mongoose';
import { principalHeaders } from '@pack/http-kit';

const MODELS = 5;
const PROCESSORS = [1, 2, null];
const DAYS = 30;

/**
 * Rollups as 100,000 calls over 30 days, 5 models and 3 processors leave them (a document per
 * model, processor and hour, and one per day), written straight into the gateway's database;
 * then the time the dashboard takes to answer for the whole range, median of 5.
 */
export async function dashboardOver100kCalls(
  database: Connection,
  gatewayUrl: string,
  secret: string,
): Promise<{ documents: number; calls: number; medianMs: number }> {
  const DAY_MS = 86_400_000;
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const cells = DAYS * 24 * MODELS * PROCESSORS.length;
  const documents = [];
  let calls = 0;
  let cell = 0;
  const sums = (n: number) => ({
    calls: mongo.Long.fromNumber(n),
    errors: mongo.Long.fromNumber(0),
    input_tokens: mongo.Long.fromNumber(n * 1200),
    output_tokens: mongo.Long.fromNumber(n * 300),
    unpriced_calls: mongo.Long.fromNumber(0),
    cost_units: mongo.Long.fromNumber(n * 360_000_000),
    latency: { b40: mongo.Long.fromNumber(n) },
  });
  const key = (model: number, processor: number | null) => `${1000 + model}:${processor ?? '-'}`;
  for (let d = 1; d <= DAYS; d += 1)
    for (let model = 1; model <= MODELS; model += 1)
      for (const processor of PROCESSORS) {
        const day = new Date(today - d * DAY_MS);
        let dayCalls = 0;
        for (let h = 0; h < 24; h += 1) {
          // 100,000 calls in all, spread as evenly as whole numbers allow.
          const n = Math.floor(((cell + 1) * 100_000) / cells) - Math.floor((cell * 100_000) / cells);
          cell += 1;
          dayCalls += n;
          const start = new Date(day.getTime() + h * 3_600_000);
          const within = start.toISOString().slice(0, 10);
          const fields = { model_id: 1000 + model, processor_id: processor, start, within, ...sums(n) };
          documents.push({
            _id: `hour:${key(model, processor)}:${start.toISOString()}`,
            period: 'hour',
            ...fields,
          });
        }
        calls += dayCalls;
        const within = day.toISOString().slice(0, 7);
        const fields = {
          model_id: 1000 + model,
          processor_id: processor,
          start: day,
          within,
          ...sums(dayCalls),
        };
        documents.push({
          _id: `day:${key(model, processor)}:${day.toISOString()}`,
          period: 'day',
          ...fields,
        });
      }
  const collection = database.collection<{ _id: string }>('llm_call_rollups');
  for (let i = 0; i < documents.length; i += 1000) await collection.insertMany(documents.slice(i, i + 1000));
  const from = new Date(today - (DAYS + 1) * DAY_MS).toISOString();
  const url = `/v1/ai/dashboard/?from=${from}&group_by=model`;
  const times: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    const began = performance.now();
    const response = await fetch(`${gatewayUrl}${url}`, {
      headers: principalHeaders(secret, 'GET', url, { id: 1, username: 'bench', role: 'admin' }),
    });
    const body = (await response.json()) as { totals?: { calls: number } };
    if (response.status !== 200) throw new Error(`the dashboard answered ${response.status}`);
    if ((body.totals?.calls ?? 0) < calls) throw new Error('the dashboard did not count every call');
    times.push(performance.now() - began);
  }
  times.sort((a, b) => a - b);
  return { documents: documents.length, calls, medianMs: times[2]! };
}
