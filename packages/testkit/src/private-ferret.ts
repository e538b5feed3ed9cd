import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { repoScript } from './repo';
import { CEILINGS } from './ceilings';
import { recordProcess } from './leftover-files';
import { freePort } from './ports';
import { waitFor } from './waiting';

/**
 * Runs `scripts/infra.sh <args>` (progress to this process's stderr; `input` on its stdin) and
 * returns what it printed.
 */
export function infraScript(args: string[], input?: string): string {
  return execFileSync('bash', [repoScript('infra.sh'), ...args], {
    encoding: 'utf8',
    input,
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'inherit'],
  });
}

/** The value of an `export NAME='...'` line that scripts/infra.sh printed. */
export function exported(output: string, name: string): string {
  const value = new RegExp(`^export ${name}='([^']*)'`, 'm').exec(output)?.[1];
  if (value === undefined) throw new Error(`scripts/infra.sh printed no ${name}`);
  return value;
}

/** A FerretDB process of its own on a throw-away PostgreSQL database (startPrivateFerret). */
export interface PrivateFerret {
  /** Its MongoDB URL. */
  url: string;
  /** The PostgreSQL database it stores into (bench_*). */
  database: string;
  /** Runs SQL in that database (scripts/infra.sh pg-db sql) and returns the rows, `|` between columns. */
  sql(statements: string): string;
  /** Stops the process and starts the same binary again on the same database. */
  restart(): Promise<void>;
  /** Stops the process, drops the database, and stops PostgreSQL if this started it. */
  stop(): Promise<void>;
}

/**
 * Whether something accepts connections on the port. Every way out settles the promise: a
 * socket destroyed by the give-up timer emits no 'error', so when a busy event loop runs the timer
 * before the connect's outcome, only the timer's own settle keeps the answer from pending for good.
 */
export async function answers(port: number, giveUpMs = 1000): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const settle = (answered: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answered);
    };
    const socket = net
      .connect(port, '127.0.0.1', () => settle(true))
      .on('error', () => settle(false))
      .on('close', () => settle(false));
    socket.unref();
    const timer = setTimeout(() => settle(false), giveUpMs);
    timer.unref();
  });
}

async function exit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(force);
}

/**
 * Our FerretDB build (`patched`, tools/ferretdb with its patches) or the unpatched one (`stock`),
 * as a process of its own on a new database of scripts/infra.sh's private PostgreSQL (started if
 * needed): for the benches, and for tests of the patches that restart the server or read its
 * tables, which must not touch the suite's shared server. `prefix` names the database
 * (`<prefix>_<random>`, prefix matching bench_[a-z0-9_]+). `urlParams` go into its PostgreSQL URL
 * (e.g. `pool_max_conns=4`: the size of FerretDB's pool of PostgreSQL connections).
 */
export async function startPrivateFerret(
  variant: 'patched' | 'stock' = 'patched',
  prefix = 'bench_ferret',
  urlParams = '',
): Promise<PrivateFerret> {
  const binary = infraScript(['ferretdb-bin', variant]).trim();
  const pg = infraScript(['pg-up']);
  const database = `${prefix}_${randomBytes(3).toString('hex')}`;
  infraScript(['pg-db', 'create', database]);
  const port = await freePort();
  let child: ChildProcess | undefined;

  const launch = async () => {
    const started = spawn(
      binary,
      [
        `-listen-addr=127.0.0.1:${port}`,
        `-postgresql-url=${exported(pg, 'PACK_PG_URL')}/${database}${urlParams ? `?${urlParams}` : ''}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child = started;
    recordProcess(started);
    let log = '';
    started.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const outcome = await waitFor(
      async () => (started.exitCode !== null ? 'exited' : (await answers(port)) && 'listening'),
      { timeoutMs: CEILINGS.start, intervalMs: 100, what: `FerretDB (${variant}) on port ${port}` },
    ).catch(() => 'silent');
    if (outcome !== 'listening')
      throw new Error(`FerretDB (${variant}) did not start on port ${port}:\n${log}`);
  };
  const stop = async () => {
    if (child) await exit(child);
    infraScript(['pg-db', 'drop', database]);
    if (exported(pg, 'PACK_PG_STARTED') === '1') infraScript(['pg-down']);
  };
  try {
    await launch();
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: `mongodb://pack:pack@127.0.0.1:${port}/?authMechanism=PLAIN`,
    database,
    sql: (statements) => infraScript(['pg-db', 'sql', database], statements),
    restart: async () => {
      if (child) await exit(child);
      await launch();
    },
    stop,
  };
}
