import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, repoScript } from './repo';
import { isAlive } from './owner';
import { TEST_INFRA_ENV } from './infra';
import { exported } from './private-ferret';
import { freePort } from './ports';
import { waitFor } from './waiting';

/**
 * A PostgreSQL + FerretDB pair of its own (scripts/infra.sh db-up in a private PACK_INFRA_DIR),
 * which a test or a bench may kill and restart under load without touching the shared servers
 * (RabbitMQ is never started or stopped by it).
 */
export interface PrivateDatabasePair {
  /** Its MongoDB URL (FerretDB on its own port). */
  url: string;
  /** FerretDB's pid, from the pair's own run folder. */
  ferretPid(): number;
  /** `kill -9` of FerretDB (its pid from the pair's run folder); resolves once it is gone. */
  killFerret(): Promise<void>;
  /** Stops PostgreSQL (pg_ctl stop -m fast). */
  stopPostgres(): Promise<void>;
  /** Starts what is down of the pair again (PostgreSQL, then FerretDB) on the same ports. */
  start(): Promise<void>;
  /** Stops the pair. Its data stays in the folder for the next run (no initdb, no FerretDB build). */
  stop(): Promise<void>;
}

/** Runs scripts/infra.sh asynchronously (the services of the same process keep running meanwhile). */
function infra(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'bash',
      [repoScript('infra.sh'), ...args],
      { encoding: 'utf8', env: { ...process.env, ...TEST_INFRA_ENV, ...env }, timeout: 10 * 60_000 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`infra.sh ${args.join(' ')} failed: ${stderr}`)) : resolve(stdout),
    );
    child.stdin?.end();
  });
}

/**
 * The FerretDB build of the shared infrastructure (built by `infra.sh up` before the suite), for a
 * pair in a folder of its own, which would otherwise build it again (minutes in a fresh clone).
 */
export function sharedFerretBinary(): string {
  return path.join(process.env.PACK_INFRA_DIR ?? path.join(REPO_ROOT, '.local', 'infra'), 'bin', 'ferretdb');
}

/**
 * Starts the pair in `<repo>/.local/<name>` on two free ports. The folder is kept between runs
 * (the first run runs initdb; later ones start in a few seconds); FerretDB's binary is the shared
 * infrastructure's build.
 */
export async function startPrivateDatabasePair(name = 'infra-db-restart'): Promise<PrivateDatabasePair> {
  const dir = path.join(REPO_ROOT, '.local', name);
  const env = {
    PACK_INFRA_DIR: dir,
    PACK_PG_PORT: String(await freePort()),
    PACK_MONGO_PORT: String(await freePort()),
    PACK_FERRETDB_BIN: sharedFerretBinary(),
  };
  const url = exported(await infra(['db-up'], env), 'MONGO_URL');
  const ferretPid = () => Number(readFileSync(path.join(dir, 'run', 'ferretdb.pid'), 'utf8').trim());
  return {
    url,
    ferretPid,
    async killFerret() {
      const pid = ferretPid();
      process.kill(pid, 'SIGKILL');
      await waitFor(() => !isAlive(pid), { intervalMs: 20, what: `FerretDB (pid ${pid}) to end` });
    },
    async stopPostgres() {
      await infra(['pg-down'], env);
    },
    async start() {
      await infra(['db-up'], env);
    },
    async stop() {
      await infra(['db-down'], env);
    },
  };
}
