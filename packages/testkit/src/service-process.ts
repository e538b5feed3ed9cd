import type { ChildProcess } from 'node:child_process';
import { CEILINGS } from './ceilings';
import { startProcess, type EntryPointResult } from './process';
import { freePort } from './ports';
import { serviceBundleCommand } from './service-bundles';
import { waitFor } from './waiting';

/**
 * A service run as its own OS process (its bundle, `services/<name>/dist/main.js`, as deployed:
 * service-bundles.ts), for the tests that need one: a SIGKILL (kill -9) or a SIGTERM (graceful
 * shutdown), its exit status, what it wrote.
 */
export interface ServiceProcess {
  /** Its public listener (http://127.0.0.1:PORT). */
  readonly url: string;
  /** Its internal listener: /metrics, /healthz, /readyz. */
  readonly metricsUrl: string;
  /** The environment it was started with, PORT and METRICS_PORT as chosen. */
  readonly env: Record<string, string>;
  /** The OS process itself (its exitCode and signalCode: null while it runs). */
  readonly child: ChildProcess;
  /** Sends it a signal: SIGTERM (a graceful stop) unless another is named. */
  kill(signal?: NodeJS.Signals): void;
  /** Resolves once it ended: its status or signal, its standard output and error. */
  readonly exited: Promise<EntryPointResult>;
  /** Its standard output so far (its log lines, at the LOG_LEVEL of its environment). */
  output(): string;
}

export interface ServiceProcessOptions {
  /** How long it may take to answer /readyz with 200: the kit's start ceiling unless given. */
  readyTimeoutMs?: number;
  /** SIGKILLed after this at the latest, should the test not end it: the kit's process lifetime. */
  lifetimeMs?: number;
  /** What the wait for it is called in a failure: `<name> to be ready`. */
  what?: string;
}

/**
 * Starts the service `name` as its own process with exactly `env` (plus PATH and the production
 * allocator settings), and waits until its /readyz answers 200. PORT and METRICS_PORT are kept
 * when `env` gives them (a restart on the same address), free ports otherwise (or for '0').
 * Fails at once, with what it wrote, when the process ends before it is ready; throws before
 * starting it when its bundle is missing or stale (service-bundles.ts). The in-process variant
 * is startHarness; a harness's `spawn()` starts a replica of it this way.
 */
export async function spawnService(
  name: string,
  env: Record<string, string>,
  {
    readyTimeoutMs = CEILINGS.start,
    lifetimeMs = CEILINGS.processLifetime,
    what = `${name} to be ready`,
  }: ServiceProcessOptions = {},
): Promise<ServiceProcess> {
  const port = await portOf(env.PORT);
  const metricsPort = await portOf(env.METRICS_PORT);
  const ownEnv = { ...env, PORT: String(port), METRICS_PORT: String(metricsPort) };
  const bundle = serviceBundleCommand(name);
  const { child, exited, output } = startProcess(
    process.execPath,
    bundle.args,
    { ...bundle.env, ...ownEnv },
    lifetimeMs,
  );
  const url = `http://127.0.0.1:${port}`;
  const metricsUrl = `http://127.0.0.1:${metricsPort}`;
  let ended: EntryPointResult | undefined;
  void exited.then((result) => (ended = result));
  try {
    // Polled until it answers, or until it ended (no use waiting for it then). On the internal
    // listener: a connection the kit keeps alive to the service's own port would hold its stop
    // for the whole idle grace (SHUTDOWN_IDLE_GRACE_MS).
    await waitFor(async () => ended ?? (await answersReady(metricsUrl)), { timeoutMs: readyTimeoutMs, what });
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  if (ended)
    throw new Error(
      `${name} ended before it was ready (status ${ended.status}, signal ${ended.signal}): ${ended.stderr.slice(-2000)}`,
    );
  return {
    url,
    metricsUrl,
    env: ownEnv,
    child,
    kill: (signal = 'SIGTERM') => child.kill(signal),
    exited,
    output,
  };
}

/**
 * Whether a service's internal listener answers /readyz with 200 (its database, broker and
 * start-up steps ready). The body is read, so the connection goes back to the pool.
 */
export async function answersReady(metricsUrl: string): Promise<boolean> {
  const answer = await fetch(`${metricsUrl}/readyz`).catch(() => null);
  await answer?.text();
  return answer?.status === 200;
}

async function portOf(given: string | undefined): Promise<number> {
  return given && given !== '0' ? Number(given) : freePort();
}
