import {
  CEILINGS,
  queueDepths,
  waitFor,
  type FakeProviderServer,
  type QueueDepth,
  type Receiver,
} from '@pack/testkit';
import { callKey, latestStages, type StageView } from '../pipeline-actors';
import type { Stack } from '../stack';

/** One scenario as the checker counts it: a row of its table. */
export interface CheckRow {
  scenario: string;
  submitted: number;
  ok: number;
  /** Ended FAILED with a stated reason. */
  failed: number;
  /** Not ended when the wait ran out, or FAILED without a reason. */
  stuck: number;
  /** Provider calls of a stage beyond its first. */
  extraProviderCalls: number;
  /** Webhook requests repeating a webhook-id already received. */
  webhookDuplicates: number;
  /** The stack's queues still holding messages (ready or unacknowledged) after the heal. */
  queuesNonEmpty: number;
  /** Acknowledged writes not found: PackData of an OK stage, a call record of an answered call, a webhook of an approval, its response record. */
  lostWrites: number;
  durationS: number;
  /** A pipeline's mean time, its first stage's start to its last stage's end (OK ones). */
  meanPipelineS: number;
  /** The slowest OK pipeline's time: a message held back (a late delayed retry) shows here. */
  slowestPipelineS: number;
  /** What each non-zero count is made of, for the reader of a failure. */
  details: string[];
}

/** Where the scenario's counts start: what the fake provider and the receiver had before it. */
export interface CheckStart {
  at: number;
  providerRequests: number;
  webhooks: number;
}

export function checkStart(fake: FakeProviderServer, receiver: Receiver): CheckStart {
  return { at: Date.now(), providerRequests: fake.requests.length, webhooks: receiver.requests.length };
}

export interface CheckInput {
  scenario: string;
  stack: Stack;
  fake: FakeProviderServer;
  receiver: Receiver;
  start: CheckStart;
  /** The Service Items whose declarations were submitted (and approved) in the scenario. */
  items: number[];
  /** Stages each pipeline runs (config, verify, execution). */
  stages: number;
  /** How long pipelines may take to end after the heal. */
  timeoutMs?: number;
  /** The stack's queues (the shared local node's unless given: a cluster's of its own). */
  queueDepths?: (namespace: string) => Promise<Map<string, QueueDepth>>;
}

const ended = (stages: StageView[], count: number) =>
  stages.length === count && (stages[count - 1]?.state === 'OK' || stages.some((s) => s.state === 'FAILED'));

/** Waits (to `timeoutMs`) for every pipeline to end, then counts. */
export async function check(input: CheckInput): Promise<CheckRow> {
  const { stack, items, stages: count } = input;
  const details: string[] = [];
  const all = await waitFor(
    async () => {
      const seen = await Promise.all(items.map((item) => latestStages(stack, item)));
      return seen.every((stages) => ended(stages, count)) && seen;
    },
    { what: `${items.length} pipelines ended`, timeoutMs: input.timeoutMs ?? CEILINGS.longWait },
  ).catch(() => Promise.all(items.map((item) => latestStages(stack, item))));
  const durationS = (Date.now() - input.start.at) / 1000;
  let ok = 0;
  let failed = 0;
  let stuck = 0;
  all.forEach((stages, i) => {
    const failure = stages.find((stage) => stage.state === 'FAILED');
    if (ended(stages, count) && !failure) ok += 1;
    else if (failure?.error) failed += 1;
    else {
      stuck += 1;
      details.push(
        `item ${items[i]} stuck: ${stages.map((s) => `${s.stage} ${s.state}`).join(', ') || 'no pipeline'}`,
      );
    }
  });
  const okItems = items.filter((_, i) => ended(all[i]!, count) && !all[i]!.some((s) => s.state === 'FAILED'));
  const extraProviderCalls = countExtraCalls(input, details);
  const { duplicates, lostWebhooks } = await countWebhooks(input, okItems.length, details);
  const queuesNonEmpty = await countNonEmptyQueues(
    () => (input.queueDepths ?? queueDepths)(stack.brokerNamespace),
    details,
  );
  const lostWrites = lostWebhooks + (await countLostRecords(input, okItems, details));
  return {
    scenario: input.scenario,
    submitted: items.length,
    ok,
    failed,
    stuck,
    extraProviderCalls,
    webhookDuplicates: duplicates,
    queuesNonEmpty,
    lostWrites,
    durationS: Math.round(durationS * 10) / 10,
    ...pipelineTimes(
      all.filter((stages) => ended(stages, count) && !stages.some((s) => s.state === 'FAILED')),
    ),
    details,
  };
}

function pipelineTimes(okPipelines: StageView[][]): { meanPipelineS: number; slowestPipelineS: number } {
  if (okPipelines.length === 0) return { meanPipelineS: 0, slowestPipelineS: 0 };
  const seconds = okPipelines.map(
    (stages) =>
      (Date.parse(stages[stages.length - 1]!.finished_at) - Date.parse(stages[0]!.started_at)) / 1000,
  );
  const tenth = (value: number) => Math.round(value * 10) / 10;
  return {
    meanPipelineS: tenth(seconds.reduce((a, b) => a + b, 0) / seconds.length),
    slowestPipelineS: tenth(Math.max(...seconds)),
  };
}

/** Provider calls per (Service Item, stage) of these items beyond one. */
function countExtraCalls({ fake, start, items }: CheckInput, details: string[]): number {
  const ours = new Set(items.map(String));
  const perCall = new Map<string, number>();
  for (const request of fake.requests.slice(start.providerRequests)) {
    if (!request.path.endsWith('/chat/completions')) continue;
    const key = callKey(request);
    if (ours.has(key.split('/')[0]!)) perCall.set(key, (perCall.get(key) ?? 0) + 1);
  }
  const repeated = [...perCall].filter(([, calls]) => calls > 1);
  if (repeated.length)
    details.push(`provider calls repeated: ${repeated.map(([k, n]) => `${k} x${n}`).join(', ')}`);
  return repeated.reduce((sum, [, calls]) => sum + calls - 1, 0);
}

/** Repeats of a webhook-id, and approvals (of pipelines that ended OK) whose webhook never came. */
async function countWebhooks({ receiver, start }: CheckInput, expected: number, details: string[]) {
  const since = () => receiver.requests.slice(start.webhooks);
  const ids = () => new Set(since().map((request) => String(request.headers['webhook-id'])));
  // The last approvals' webhooks may still be on their way.
  await waitFor(() => ids().size >= expected, {
    what: 'a webhook per approval',
    timeoutMs: CEILINGS.wait,
  }).catch(() => undefined);
  const counts = new Map<string, number>();
  for (const request of since()) {
    const id = String(request.headers['webhook-id']);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  const duplicates = [...counts.values()].reduce((sum, n) => sum + n - 1, 0);
  const lostWebhooks = Math.max(0, expected - counts.size);
  if (duplicates)
    details.push(
      `webhook-ids repeated: ${[...counts]
        .filter(([, n]) => n > 1)
        .map(([id, n]) => `${id} x${n}`)
        .join(', ')}`,
    );
  if (lostWebhooks) details.push(`webhooks missing: ${lostWebhooks} of ${expected}`);
  return { duplicates, lostWebhooks };
}

/** Queues of the stack still holding messages once the last pipeline ended (a few seconds to drain). */
async function countNonEmptyQueues(
  depths: () => Promise<Map<string, QueueDepth>>,
  details: string[],
): Promise<number> {
  // -1: a quorum queue whose leader did not answer.
  const nonEmpty = async () => [...(await depths())].filter(([, depth]) => depth.messages !== 0);
  await waitFor(async () => (await nonEmpty()).length === 0, {
    what: 'every queue empty',
    timeoutMs: CEILINGS.wait,
  }).catch(() => undefined);
  const left = await nonEmpty();
  if (left.length)
    details.push(
      `queues not empty: ${left.map(([name, d]) => `${name} (${d.ready} ready, ${d.unacknowledged} unacknowledged, ${d.consumers} consumers)`).join(', ')}`,
    );
  return left.length;
}

/**
 * Acknowledged writes looked up where they were written: each OK stage's PackData (the
 * orchestrator), a finished call record per answered provider call (the llm-gateway), a
 * response record per webhook the receiver answered (the webhook-dispatcher).
 */
async function countLostRecords(
  { stack, fake, receiver, start, stages }: CheckInput,
  okItems: number[],
  details: string[],
) {
  const db = (name: string) => stack.service(name).context.mongo.connection.db!;
  let lost = 0;
  // A stage keeps its latest PackData (the history `pack_data` only replaced ones): read from
  // the items' runs, grouped here (FerretDB has no $addToSet in $group).
  const stagesOf = new Map<number, Set<string>>();
  const runs = db('pipeline-orchestrator')
    .collection<{ service_item_id: number; stages: Record<string, { pack_data_json: string | null }> }>(
      'pipelines',
    )
    .find({ service_item_id: { $in: okItems } }, { projection: { service_item_id: 1, stages: 1 } });
  for await (const { service_item_id: item, stages: byName } of runs)
    for (const [stage, { pack_data_json: data }] of Object.entries(byName))
      if (data !== null) stagesOf.set(item, (stagesOf.get(item) ?? new Set()).add(stage));
  const withAll = okItems.filter((item) => (stagesOf.get(item)?.size ?? 0) >= stages).length;
  if (withAll < okItems.length) details.push(`PackData missing for ${okItems.length - withAll} OK pipelines`);
  lost += okItems.length - withAll;
  const answered = fake.requests
    .slice(start.providerRequests)
    .filter((r) => r.path.endsWith('/chat/completions'));
  const records = await db('llm-gateway')
    .collection('llm_calls')
    .countDocuments({ state: 'finished', finished_at: { $gte: new Date(start.at) } });
  if (records < new Set(answered.map(callKey)).size)
    details.push(`call records: ${records} for ${new Set(answered.map(callKey)).size} answered calls`);
  lost += Math.max(0, new Set(answered.map(callKey)).size - records);
  const delivered = receiver.requests.slice(start.webhooks).length;
  const responses = await db('webhook-dispatcher')
    .collection('webhook_responses')
    .countDocuments({ created_at: { $gte: new Date(start.at) } });
  if (responses < delivered) details.push(`webhook responses: ${responses} for ${delivered} deliveries`);
  lost += Math.max(0, delivered - responses);
  return lost;
}

const COLUMNS: [keyof CheckRow, string][] = [
  ['scenario', 'scenario'],
  ['submitted', 'submitted'],
  ['ok', 'ok'],
  ['failed', 'failed'],
  ['stuck', 'stuck'],
  ['extraProviderCalls', 'extra provider calls'],
  ['webhookDuplicates', 'webhook duplicates'],
  ['queuesNonEmpty', 'queues non-empty'],
  ['lostWrites', 'lost writes'],
  ['durationS', 'duration (s)'],
  ['meanPipelineS', 'mean pipeline (s)'],
  ['slowestPipelineS', 'slowest pipeline (s)'],
];

/** The rows as a Markdown table. */
export function table(rows: CheckRow[]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    line(COLUMNS.map(([, title]) => title)),
    line(COLUMNS.map(() => '---')),
    ...rows.map((row) => line(COLUMNS.map(([key]) => String(row[key])))),
  ].join('\n');
}
