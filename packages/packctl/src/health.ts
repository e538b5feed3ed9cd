/** `packctl health`: every service's /readyz and the broker's queues, as two tables. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { BrokerSession, type QueueDepth } from './broker';
import { CliError, EXIT, table, type Command, type Context } from './cli';

const REPO = path.resolve(__dirname, '../../..');

interface Target {
  name: string;
  url: string;
}

/** --service name=url, or every service of deploy/services.yaml that exists in this checkout. */
export function targets(context: Context): Target[] {
  if (context.services) {
    return context.services.map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) throw new CliError(`--service takes name=url, not ${pair}`);
      return { name: pair.slice(0, at), url: pair.slice(at + 1).replace(/\/$/, '') };
    });
  }
  const file = parse(readFileSync(path.join(REPO, 'deploy/services.yaml'), 'utf8')) as {
    services: { name: string; metrics_port: number }[];
  };
  return file.services
    .filter((s) => existsSync(path.join(REPO, 'services', s.name, 'src/main.ts')))
    .map((s) => ({ name: s.name, url: `http://127.0.0.1:${s.metrics_port}` }));
}

interface ServiceHealth {
  name: string;
  url: string;
  ready: boolean;
  status: string;
  checks: Record<string, boolean>;
  queues: string[];
}

async function probe(target: Target): Promise<ServiceHealth> {
  const base = { ...target, ready: false, checks: {}, queues: [] };
  try {
    const ready = await fetch(`${target.url}/readyz`, { signal: AbortSignal.timeout(3000) });
    const body = (await ready.json()) as { status?: string; checks?: Record<string, boolean> };
    const metrics = await fetch(`${target.url}/metrics`, { signal: AbortSignal.timeout(3000) });
    const text = metrics.ok ? await metrics.text() : '';
    const queues = [...text.matchAll(/^broker_queue_messages\{[^}]*queue="([^"]+)"/gm)].map((m) => m[1]!);
    return {
      ...base,
      ready: ready.status === 200,
      status: body.status ?? String(ready.status),
      checks: body.checks ?? {},
      queues,
    };
  } catch (error) {
    return { ...base, status: `unreachable (${(error as Error).message})` };
  }
}

interface QueueHealth {
  queue: string;
  main?: QueueDepth;
  retry?: QueueDepth;
  dead?: QueueDepth;
}

export const health: Command = {
  usage: 'health',
  summary: "check the whole stack: every service's /readyz and the broker's queues (backlog, dead letters)",
  details: [
    'Services are reached on their metrics listener (METRICS_PORT). Queues are the ones the',
    'services report (broker_queue_messages), read from RabbitMQ with checkQueue.',
    'Exit 1 when a service is not ready or unreachable, RabbitMQ is unreachable, or a queue has dead letters.',
  ],
  positionals: 0,
  async run(context) {
    const services = await Promise.all(targets(context).map(probe));
    const queueNames = [...new Set(services.flatMap((s) => s.queues))].sort();
    let queues: QueueHealth[] = [];
    let brokerProblem: string | undefined;
    if (queueNames.length > 0) {
      try {
        const session = await BrokerSession.open(context.amqpUrl);
        try {
          for (const queue of queueNames)
            queues.push({
              queue,
              main: await session.depth(queue),
              retry: await session.depth(`${queue}.retries`),
              dead: await session.depth(`${queue}.dlq`),
            });
        } finally {
          await session.close();
        }
      } catch (error) {
        brokerProblem = (error as Error).message;
        queues = [];
      }
    }
    const problems = [
      ...services.filter((s) => !s.ready).map((s) => `${s.name} is ${s.status}`),
      ...(brokerProblem ? [brokerProblem] : []),
      ...queues
        .filter((q) => (q.dead?.messages ?? 0) > 0)
        .map((q) => `${q.queue} has ${q.dead!.messages} dead letters`),
    ];
    if (context.json) {
      context.out(JSON.stringify({ healthy: problems.length === 0, services, queues, problems }));
      return problems.length === 0 ? EXIT.ok : EXIT.failed;
    }
    const count = (depth?: QueueDepth) => (depth ? String(depth.messages) : '-');
    context.out(
      table(
        ['SERVICE', 'READY', 'CHECKS', 'URL'],
        services.map((s) => [
          s.name,
          s.ready ? 'yes' : 'NO',
          Object.entries(s.checks)
            .map(([check, ok]) => `${check} ${ok ? 'ok' : 'FAILING'}`)
            .join(', ') || s.status,
          s.url,
        ]),
      ),
    );
    if (queues.length > 0) {
      context.out('');
      context.out(
        table(
          ['QUEUE', 'BACKLOG', 'RETRYING', 'DEAD LETTERS', 'CONSUMERS'],
          queues.map((q) => [
            q.queue,
            count(q.main),
            count(q.retry),
            count(q.dead),
            q.main ? q.main.consumers : '-',
          ]),
        ),
      );
    }
    context.out('');
    context.out(problems.length === 0 ? 'healthy' : `UNHEALTHY: ${problems.join('; ')}`);
    return problems.length === 0 ? EXIT.ok : EXIT.failed;
  },
};
