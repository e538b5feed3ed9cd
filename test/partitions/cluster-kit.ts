import { connectAny } from '@pack/broker';
import { metricsText, type RabbitNode } from '@pack/testkit';
import { latestStages } from '../pipeline-actors';
import type { Stack } from '../stack';
import type { World } from './scenario-kit';

/** The load: 1 in the suite; bench/partitions runs more (PACK_PARTITION_SCALE). */
export const SCALE = Number(process.env.PACK_PARTITION_SCALE ?? 1);
/** Pipelines per scenario: before the nemesis, and while it holds. */
export const BEFORE = 5 * SCALE;
export const DURING = 5 * SCALE;

/** An isolated node is cut off at most this long (Jepsen's partitions are 10-30 s). */
export const ISOLATION_MS = 30_000;

/** The slowest of `items`' pipelines, each stage's start and end in seconds from `since`. */
export async function slowest(stack: Stack, items: number[], since: number): Promise<string> {
  const all = await Promise.all(
    items.map(async (item) => ({ item, stages: await latestStages(stack, item) })),
  );
  const span = ({ stages }: (typeof all)[number]) =>
    stages.length ? Date.parse(stages.at(-1)!.finished_at) - Date.parse(stages[0]!.started_at) : 0;
  const worst = all.sort((a, b) => span(b) - span(a))[0];
  const at = (time: string) => ((Date.parse(time) - since) / 1000).toFixed(1);
  return worst
    ? `item ${worst.item}: ${worst.stages.map((s) => `${s.stage} ${at(s.started_at)}..${at(s.finished_at)}`).join(', ')}`
    : '';
}

/** Stage requests the stack's orchestrator sent again (its sweeper, after 30 s without a result). */
export async function stageResends(stack: Stack): Promise<number> {
  return (await metricsText(stack.service('pipeline-orchestrator').metricsUrl))
    .split('\n')
    .filter((line) => line.startsWith('pipeline_stage_requests_resent_total'))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

/**
 * When a client with a `heartbeatSeconds` heartbeat notices that `node` went silent: a connection
 * of its own to that node alone, closed by amqplib's heartbeat check (the broker client then
 * moves on to the next node, decision 0049).
 */
export async function heartbeatProbe(node: RabbitNode, heartbeatSeconds: number) {
  const connection = await connectAny(`${node.url}?heartbeat=${heartbeatSeconds}`);
  connection.on('error', () => undefined);
  let closedAt: number | undefined;
  connection.on('close', () => (closedAt = Date.now()));
  return {
    node: node.id,
    heartbeatSeconds,
    closed: () => closedAt !== undefined,
    noticedAfter: (since: number) => (closedAt === undefined ? '-' : String((closedAt - since) / 1000)),
    close: () => connection.close().catch(() => undefined),
  };
}

/** The node leading the most of the stack's queues (and how many each leads), as the first node sees it. */
export async function busiest({ cluster, stack }: World) {
  const counts = await cluster!.leaders(cluster!.nodes[0]!, `${stack.brokerNamespace}.`);
  const [id] = [...counts].sort(([, a], [, b]) => b - a)[0]!;
  return { node: cluster!.node(id), counts };
}
