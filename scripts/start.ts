/**
 * `pnpm start`: the whole platform on this machine, in the foreground until Ctrl-C, run as
 * production runs it. `pnpm dev` (`--dev`): the same, from the sources, each service restarted
 * when a file it loaded changes.
 *
 * 1. Starts whatever infrastructure is missing (scripts/infra.sh: RabbitMQ, FerretDB on
 *    PostgreSQL), unless MONGO_URL and AMQP_URL point elsewhere.
 * 2. Creates local secrets once (.local/dev.env, mode 0600): the internal secret shared by the
 *    gateway and the services, and an encryption key. Variables already set win.
 * 3. Builds the operator console (packages/console) when its build is missing or older than its
 *    sources (a content hash), so the gateway serves it at `/`.
 * 4. Builds the bundle of each service whose sources changed (scripts/build-services.ts: a hash
 *    of the service's package and the workspace packages it depends on), and starts every service
 *    under services/ on its default port, gateway last: `node --max-semi-space-size=2
 *    --optimize-for-size services/<name>/dist/main.js` with the image's allocator settings and
 *    NODE_ENV=production (docs/decisions/0050-compiled-services.md), so what runs here is what
 *    the image runs, in memory too. `pnpm dev` skips the build and runs
 *    `node --watch --require tsx/cjs services/<name>/src/main.ts` instead.
 *    Then prints the gateway URL and, on first start without PACK_ADMIN_TOKEN, a one-time admin
 *    token.
 * 5. Writes .local/stack.json (PACK_STACK_FILE), the gateway URL and admin token `pnpm demo`
 *    finds the stack by, and removes it when it stops.
 * 6. With PACK_TRACING=1, starts the local trace viewer (scripts/trace-viewer.sh: Zipkin) and has
 *    every service export its spans there (OTEL_TRACES_EXPORTER=zipkin), unless the operator set
 *    OTEL_TRACES_EXPORTER, OTEL_EXPORTER_* or OTEL_SDK_DISABLED; prints the viewer's address.
 *
 * Provider and webhook URLs may reach loopback here (PACK_ALLOWED_TARGET_CIDRS, unless set; an
 * empty value refuses them as in production): on one's own machine the fake provider and the
 * webhook receiver of `pnpm demo` and local tools listen there. Compose and Kubernetes leave it empty.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ensureConsoleBuilt } from '@pack/console';
import { SERVICE_NAMES } from './build-services';
import { removeLocalStack, stackFile, writeLocalStack } from './lib/local-stack';
import { prepareRuntime, spawnService, startRuntime, type Runtime } from './lib/service-process';
import { tracing, TracingError, type Tracing } from './tracing';

const root = path.resolve(__dirname, '..');
const local = path.join(root, '.local');
const devEnvFile = path.join(local, 'dev.env');
const LOCAL_TARGETS = '127.0.0.0/8,::1/128';

function infraEnv(): Record<string, string> {
  if (process.env.MONGO_URL && process.env.AMQP_URL) return {};
  const output = execFileSync('bash', [path.join(root, 'scripts/infra.sh'), 'up'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return Object.fromEntries([...output.matchAll(/^export (\w+)='([^']*)'$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** Secrets generated on first start and kept, so data encrypted today can be read tomorrow. */
function localSecrets(): { env: Record<string, string>; newAdminToken?: string } {
  mkdirSync(local, { recursive: true });
  const stored: Record<string, string> = existsSync(devEnvFile)
    ? Object.fromEntries(
        readFileSync(devEnvFile, 'utf8')
          .split('\n')
          .map((line) => /^(\w+)=(.*)$/.exec(line))
          .filter((m): m is RegExpExecArray => m !== null)
          .map((m) => [m[1]!, m[2]!]),
      )
    : {};
  let newAdminToken: string | undefined;
  stored.PACK_INTERNAL_SECRET ??= randomBytes(32).toString('base64url');
  stored.PACK_ENCRYPTION_KEYS ??= `local1:${randomBytes(32).toString('base64')}`;
  if (!process.env.PACK_ADMIN_TOKEN && !stored.PACK_ADMIN_TOKEN) {
    newAdminToken = `pack_${randomBytes(32).toString('base64url')}`;
    stored.PACK_ADMIN_TOKEN = newAdminToken;
  }
  writeFileSync(
    devEnvFile,
    `${Object.entries(stored)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n')}\n`,
    { mode: 0o600 },
  );
  return { env: stored, newAdminToken };
}

/** The gateway last: it routes to the others. */
function services(): string[] {
  return [...SERVICE_NAMES.filter((name) => name !== 'gateway'), 'gateway'];
}

function tracingOrExit(): Tracing {
  try {
    return tracing(process.env);
  } catch (error) {
    if (!(error instanceof TracingError)) throw error;
    process.stderr.write(`[start] ${error.message}\n`);
    process.exit(1);
  }
}

/** Builds the stale bundles (`pnpm start`) and says what it did. */
async function prepare(runtime: Runtime): Promise<void> {
  if (runtime === 'source') {
    process.stdout.write('[start] services: from their sources, restarted when a file changes (pnpm dev)\n');
    return;
  }
  const started = Date.now();
  process.stdout.write('[start] services: building the bundles that are missing or stale (pnpm build)\n');
  const built = await prepareRuntime(runtime);
  process.stdout.write(
    built.length === 0
      ? '[start] services: every bundle is current (services/<name>/dist/main.js)\n'
      : `[start] services: built ${built.join(', ')} in ${Date.now() - started} ms\n`,
  );
}

async function main(): Promise<void> {
  const runtime = startRuntime(process.argv);
  const traced = tracingOrExit();
  const env = { ...infraEnv() };
  const secrets = localSecrets();
  const before = ensureConsoleBuilt();
  process.stdout.write(
    before === 'fresh'
      ? '[start] console: build is current\n'
      : `[start] console: built (it was ${before})\n`,
  );
  await prepare(runtime);
  // PORT or METRICS_PORT would give every service the same port: each keeps its defaults
  // (deploy/services.yaml; GATEWAY_PORT moves the gateway).
  const { PORT: _port, METRICS_PORT: _metricsPort, ...inherited } = process.env;
  const shared = {
    // What the image sets (it changes nothing the services do today; libraries may read it).
    ...(runtime === 'compiled' ? { NODE_ENV: 'production' } : {}),
    PACK_ALLOWED_TARGET_CIDRS: LOCAL_TARGETS,
    ...secrets.env,
    ...env,
    ...traced.env,
    ...inherited,
  } as Record<string, string>;
  const children: ChildProcess[] = [];
  for (const name of services()) {
    const child = spawnService(name, runtime, {
      env: { ...shared, MONGO_DB: process.env.MONGO_DB ?? `pack_${name.replace(/-/g, '_')}` },
      nodeArgs: runtime === 'source' ? ['--watch'] : [],
    });
    child.on('exit', (code, signal) => {
      if (!stopping)
        process.stderr.write(`[start] ${name} exited (${signal ?? code}); stopping everything\n`);
      shutdown(code ?? 1);
    });
    children.push(child);
  }
  const port = process.env.GATEWAY_PORT || '8080';
  const gateway = `http://127.0.0.1:${port}`;
  const stack = stackFile(process.env);
  const adminToken = shared.PACK_ADMIN_TOKEN;
  writeLocalStack(stack, { gateway, pid: process.pid, ...(adminToken ? { adminToken } : {}) });
  process.on('exit', () => removeLocalStack(stack, process.pid));
  process.stdout.write(`\n[start] gateway: ${gateway}\n`);
  process.stdout.write(`[start] operator console: ${gateway}/ (sign in with an API token)\n`);
  process.stdout.write(`[start] pnpm demo finds this stack through ${path.relative(root, stack)}\n`);
  const targets = shared.PACK_ALLOWED_TARGET_CIDRS;
  process.stdout.write(
    `[start] webhook targets may reach: public addresses${targets ? ` and ${targets}` : ''} (PACK_ALLOWED_TARGET_CIDRS); ` +
      `model URLs also private networks and loopback (PACK_MODEL_PRIVATE_TARGETS=${process.env.PACK_MODEL_PRIVATE_TARGETS ?? 'true'})\n`,
  );
  for (const line of traced.lines) process.stdout.write(`${line}\n`);
  if (secrets.newAdminToken) {
    process.stdout.write(`[start] one-time admin token (kept in .local/dev.env): ${secrets.newAdminToken}\n`);
  } else if (!process.env.PACK_ADMIN_TOKEN) {
    process.stdout.write('[start] admin token: PACK_ADMIN_TOKEN in .local/dev.env\n');
  }
  process.stdout.write(
    '[start] Ctrl-C stops the services (the infrastructure keeps running: pnpm infra:down stops it)\n\n',
  );

  let stopping = false;
  function shutdown(code: number): void {
    if (stopping) return;
    stopping = true;
    for (const child of children) child.kill('SIGTERM');
    const force = setTimeout(() => {
      for (const child of children) child.kill('SIGKILL');
      process.exit(code);
    }, 30_000);
    force.unref();
    void Promise.all(
      children.map(
        (child) =>
          new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.on('exit', resolve))),
      ),
    ).then(() => process.exit(code));
  }
  process.on('SIGINT', () => shutdown(0));
  process.on('SIGTERM', () => shutdown(0));
}

main().catch((error: unknown) => {
  process.stderr.write(`[start] ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
