import { execFileSync, spawnSync } from 'node:child_process';
import { repoScript } from './repo';

export interface InfraUrls {
  mongoUrl: string;
  amqpUrl: string;
  /** Stops what this process started (containers); local servers are left running. */
  stop?: () => Promise<void>;
}

/**
 * What the test kit adds to the environment of scripts/infra.sh: the PostgreSQL clusters of a test
 * run are throwaway, so they leave their writes to the operating system instead of flushing each
 * commit (PACK_PG_FSYNC=off). A crash of any process, PostgreSQL's included, still loses nothing;
 * only a crash of the machine could. PACK_PG_FSYNC=on runs the suite on a flushing cluster.
 */
export const TEST_INFRA_ENV = { PACK_PG_FSYNC: process.env.PACK_PG_FSYNC ?? 'off' };

/**
 * The system tools the suite runs (Chromium, slapd, Prometheus, hadolint, kustomize, ...; the
 * list is scripts/deps.sh's): when one is missing, root installs it here, anyone else gets the
 * one command to run. A test never skips because a tool is missing: it would turn into a green run.
 */
export function ensureTools(isRoot = process.getuid?.() === 0, env = process.env): void {
  const deps = repoScript('deps.sh');
  const check = spawnSync('bash', [deps, 'check'], { encoding: 'utf8', env });
  if (check.status === 0) return;
  if (!isRoot) throw new Error(`system tools missing for the test suite\n${check.stderr.trim()}`);
  const install = spawnSync('bash', [deps, 'install'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env,
    timeout: 30 * 60_000,
  });
  if (install.status !== 0)
    throw new Error(`scripts/deps.sh install failed (exit ${install.status}); its output is above`);
}

function dockerAnswers(): boolean {
  try {
    execFileSync('docker', ['info', '--format', '{{.ServerVersion}}'], { stdio: 'ignore', timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

async function startContainers(): Promise<InfraUrls> {
  const { MongoDBContainer } = await import('@testcontainers/mongodb');
  const { RabbitMQContainer } = await import('@testcontainers/rabbitmq');
  const [mongo, rabbit] = await Promise.all([
    new MongoDBContainer('mongo:7').start(),
    new RabbitMQContainer('rabbitmq:3.13-alpine').start(),
  ]);
  return {
    mongoUrl: `${mongo.getConnectionString()}/?directConnection=true`,
    amqpUrl: rabbit.getAmqpUrl(),
    stop: async () => {
      await Promise.all([mongo.stop(), rabbit.stop()]);
    },
  };
}

function startLocal(throwaway: boolean): InfraUrls {
  const output = execFileSync('bash', [repoScript('infra.sh'), 'up'], {
    encoding: 'utf8',
    env: { ...process.env, ...(throwaway ? TEST_INFRA_ENV : {}) },
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 10 * 60_000,
  });
  const value = (name: string) => new RegExp(`^export ${name}='([^']+)'`, 'm').exec(output)?.[1];
  const mongoUrl = value('MONGO_URL');
  const amqpUrl = value('AMQP_URL');
  if (!mongoUrl || !amqpUrl) throw new Error(`scripts/infra.sh up printed no URLs:\n${output}`);
  return { mongoUrl, amqpUrl };
}

/**
 * MONGO_URL / AMQP_URL when set; otherwise containers where a Docker engine answers; otherwise
 * the local servers of scripts/infra.sh (RabbitMQ from Debian, FerretDB on PostgreSQL), with
 * TEST_INFRA_ENV when `throwaway` (a test run's; a bench measures a flushing cluster).
 */
export async function resolveInfra({ throwaway = false } = {}, env = process.env): Promise<InfraUrls> {
  if (env.MONGO_URL && env.AMQP_URL) return { mongoUrl: env.MONGO_URL, amqpUrl: env.AMQP_URL };
  if (dockerAnswers()) return startContainers();
  return startLocal(throwaway);
}
