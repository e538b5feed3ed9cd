/**
 * bench/gateway: what the gateway costs on top of the service it routes to.
 *
 * Runs the settings service and the gateway as separate processes (as in production) and
 * drives both with autocannon in the same run:
 *   direct:  GET /v1/core/general_settings/ on the settings service, with signed principal headers
 *   gateway: the same request through the gateway, with `Authorization: Token <token>`
 * and prints requests/s, p50/p99 latency, the ratio gateway/direct, and the database commands
 * per request the gateway sent (it should send none for a warm token).
 *
 *   pnpm bench:gateway            (DURATION=seconds per round, CONNECTIONS=n, ROUNDS=n)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { principalHeaders } from '@pack/http-kit';
import { dropDatabase, resolveInfra } from '@pack/testkit';
import { prepareRuntime, rssMb, runtimeEnv, runtimeFromEnv, serviceCommand } from '../crash-scenario/runtime';

const duration = Number(process.env.DURATION ?? 8);
const connections = Number(process.env.CONNECTIONS ?? 16);
const rounds = Number(process.env.ROUNDS ?? 2);
const ROUTE = '/v1/core/general_settings/';

const RUNTIME = runtimeFromEnv();

function start(name: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, serviceCommand(name, RUNTIME), {
    env: { ...process.env, ...runtimeEnv(RUNTIME), ...env, LOG_LEVEL: 'warn', NODE_ENV: 'production' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function ready(url: string): Promise<void> {
  for (let i = 0; i < 300; i += 1) {
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} never became ready`);
}

async function dbCommands(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return [...text.matchAll(/^db_commands_total\{[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
}

async function load(
  url: string,
  headers: Record<string, string>,
  seconds: number,
  clients = connections,
): Promise<Figures> {
  const result = await autocannon({
    url: `${url}${ROUTE}`,
    headers,
    connections: clients,
    duration: seconds,
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    errors: result.errors + result.non2xx,
  };
}

const SEQUENTIAL = Number(process.env.SEQUENTIAL ?? 2000);

/** One request at a time over one keep-alive connection, each timed with hrtime. */
async function sequential(
  url: string,
  headers: () => Record<string, string>,
): Promise<{ p50: number; p99: number }> {
  const pool = new Pool(url, { connections: 1 });
  const times: number[] = [];
  try {
    for (let i = 0; i < SEQUENTIAL + 200; i += 1) {
      const start = process.hrtime.bigint();
      const response = await pool.request({ method: 'GET', path: ROUTE, headers: headers() });
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}`);
      if (i >= 200) times.push(Number(process.hrtime.bigint() - start) / 1e6); // the first 200 warm up
    }
  } finally {
    await pool.close();
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}

async function main(): Promise<void> {
  // MONGO_URL / AMQP_URL when set, else what the tests and `pnpm start` use (scripts/infra.sh).
  const infra = await resolveInfra();
  await prepareRuntime(RUNTIME);
  const urls = { MONGO_URL: infra.mongoUrl, AMQP_URL: infra.amqpUrl };
  const suffix = randomBytes(3).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  const adminToken = `pack_${randomBytes(32).toString('base64url')}`;
  const shared = {
    ...urls,
    PACK_INTERNAL_SECRET: secret,
    PACK_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
    BROKER_NAMESPACE: `bench_${suffix}`,
  };
  const settingsUrl = 'http://127.0.0.1:18082';
  const gatewayUrl = 'http://127.0.0.1:18080';
  // The gateway's public port does not serve /metrics; its metrics listener does.
  const gatewayMetricsUrl = 'http://127.0.0.1:19080';
  const databases = [`bench_settings_${suffix}`, `bench_gateway_${suffix}`];
  const children = [
    start('settings', { ...shared, PORT: '18082', METRICS_PORT: '19082', MONGO_DB: databases[0]! }),
    start('gateway', {
      ...shared,
      PORT: '18080',
      METRICS_PORT: '19080',
      MONGO_DB: databases[1]!,
      SETTINGS_URL: settingsUrl,
      PACK_ADMIN_TOKEN: adminToken,
    }),
  ];
  try {
    await Promise.all([ready(settingsUrl), ready(gatewayUrl)]);
    const direct = () =>
      load(
        settingsUrl,
        principalHeaders(secret, 'GET', ROUTE, { id: 1, username: 'admin', role: 'admin' }),
        duration,
      );
    const gateway = () => load(gatewayUrl, { authorization: `Token ${adminToken}` }, duration);
    await load(
      settingsUrl,
      principalHeaders(secret, 'GET', ROUTE, { id: 1, username: 'admin', role: 'admin' }),
      2,
    );
    await load(gatewayUrl, { authorization: `Token ${adminToken}` }, 2); // warm: the token is cached now

    const runs: { direct: Figures; gateway: Figures; commandsPerRequest: number }[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const d = await direct();
      const before = await dbCommands(gatewayMetricsUrl);
      const g = await gateway();
      const commands = (await dbCommands(gatewayMetricsUrl)) - before;
      runs.push({ direct: d, gateway: g, commandsPerRequest: commands / g.requests });
    }
    // Light load (one request at a time, microsecond timing): what one request pays for the hop.
    const lightDirect = await sequential(settingsUrl, () =>
      principalHeaders(secret, 'GET', ROUTE, { id: 1, username: 'admin', role: 'admin' }),
    );
    const lightGateway = await sequential(gatewayUrl, () => ({ authorization: `Token ${adminToken}` }));
    const mean = (pick: (r: (typeof runs)[number]) => number) =>
      runs.reduce((s, r) => s + pick(r), 0) / runs.length;
    const d = {
      rps: mean((r) => r.direct.rps),
      p50: mean((r) => r.direct.p50),
      p99: mean((r) => r.direct.p99),
    };
    const g = {
      rps: mean((r) => r.gateway.rps),
      p50: mean((r) => r.gateway.p50),
      p99: mean((r) => r.gateway.p99),
    };
    const errors = runs.reduce((s, r) => s + r.direct.errors + r.gateway.errors, 0);
    const row = (name: string, f: { rps: number; p50: number; p99: number }) =>
      `${name.padEnd(9)} ${f.rps.toFixed(0).padStart(8)} req/s   p50 ${f.p50.toFixed(2).padStart(6)} ms   p99 ${f.p99.toFixed(2).padStart(6)} ms`;
    process.stdout.write(
      [
        `bench/gateway: GET ${ROUTE}, ${connections} connections, ${rounds} x ${duration} s per side, ${new Date().toISOString()}`,
        row('direct', d),
        row('gateway', g),
        `ratio     throughput gateway/direct ${(g.rps / d.rps).toFixed(3)}   p99 added ${(g.p99 - d.p99).toFixed(2)} ms   p50 added ${(g.p50 - d.p50).toFixed(2)} ms`,
        `light load (${SEQUENTIAL} requests one at a time): direct p50 ${lightDirect.p50.toFixed(3)} ms p99 ${lightDirect.p99.toFixed(3)} ms, gateway p50 ${lightGateway.p50.toFixed(3)} ms p99 ${lightGateway.p99.toFixed(3)} ms; added p50 ${(lightGateway.p50 - lightDirect.p50).toFixed(3)} ms, p99 ${(lightGateway.p99 - lightDirect.p99).toFixed(3)} ms`,
        `gateway database commands per request (warm token): ${mean((r) => r.commandsPerRequest).toFixed(5)}`,
        `errors or non-2xx answers: ${errors}`,
        `RSS after the run (${RUNTIME}): settings ${rssMb(children[0]!.pid)?.toFixed(0)} MB, gateway ${rssMb(children[1]!.pid)?.toFixed(0)} MB`,
        '',
      ].join('\n'),
    );
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(
      children.map(
        (c) => new Promise((resolve) => (c.exitCode !== null ? resolve(null) : c.on('exit', resolve))),
      ),
    );
    for (const db of databases) await dropDatabase(urls.MONGO_URL, db).catch(() => undefined);
    await infra.stop?.();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
