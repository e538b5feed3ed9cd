/**
 * `pnpm bench:crash --database-restart` (docs/decisions/0051): instead of
 * killing services, the MongoDB-wire server goes away under the same load. The services run on a
 * PostgreSQL + FerretDB pair of the bench's own (scripts/infra.sh db-up in .local/infra-bench-db-restart,
 * never the shared servers; RabbitMQ stays the shared one). FerretDB is killed with -9 and started
 * again DB_FERRET_DOWN_S later; then PostgreSQL is stopped and started again DB_PG_DOWN_S later.
 * No service is restarted: each must notice, answer 503 meanwhile and come back by itself.
 */
import { startPrivateDatabasePair, type PrivateDatabasePair } from '@pack/testkit';
import { SERVICES, type Fleet } from './fleet';

const FERRET_DOWN_S = Number(process.env.DB_FERRET_DOWN_S ?? 8);
const PG_DOWN_S = Number(process.env.DB_PG_DOWN_S ?? 8);
/** The two steps, each starting a group of consumers (bench/crash-scenario/run.ts submitAll). */
export const DATABASE_STEPS = ['ferretdb', 'postgresql'] as const;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stderr.write(`[crash] ${line}\n`);

export function startBenchDatabase(): Promise<PrivateDatabasePair> {
  return startPrivateDatabasePair('infra-bench-db-restart');
}

/** Samples every service's /readyz every 250 ms until `done()` and all are ready: not-ready samples per service. */
async function watchReadiness(fleet: Fleet, done: () => boolean): Promise<Map<string, number>> {
  const notReady = new Map<string, number>();
  for (;;) {
    const ready = await Promise.all(
      SERVICES.map(async (name) => {
        const status = (await fetch(`${fleet.url(name)}/readyz`).catch(() => null))?.status;
        if (status !== 200) notReady.set(name, (notReady.get(name) ?? 0) + 1);
        return status === 200;
      }),
    );
    if (done() && ready.every(Boolean)) return notReady;
    await sleep(250);
  }
}

/**
 * The outage, under load: returns the lines to print (what went down when, how long until every
 * service was ready again, which services reported not-ready, and that none was restarted).
 */
export async function restartDatabaseInTurn(
  fleet: Fleet,
  pair: PrivateDatabasePair,
  down: Set<string>,
  steps: (() => void)[],
): Promise<string[]> {
  await sleep(3000);
  let back = false;
  const t0 = Date.now();
  const seconds = () => ((Date.now() - t0) / 1000).toFixed(1);
  steps[0]!();
  await pair.killFerret();
  down.add('ferretdb');
  const watched = watchReadiness(fleet, () => back);
  await sleep(FERRET_DOWN_S * 1000);
  await pair.start();
  down.delete('ferretdb');
  const ferretBack = seconds();
  await sleep(1000);
  steps[1]!();
  const pgStopped = seconds();
  await pair.stopPostgres();
  down.add('postgresql');
  await sleep(PG_DOWN_S * 1000);
  await pair.start();
  down.delete('postgresql');
  const pgBack = seconds();
  back = true;
  const notReady = await watched;
  const lines = [
    `FerretDB killed with -9 at 0 s, started again at ${ferretBack} s; PostgreSQL stopped at ${pgStopped} s, ` +
      `started again at ${pgBack} s; every service ready again at ${seconds()} s`,
    `not ready meanwhile (samples every 250 ms): ${
      SERVICES.map((name) => `${name} ${notReady.get(name) ?? 0}`).join(', ') || 'none'
    }`,
    `restarted: ${
      SERVICES.filter((name) => {
        const { starts, running } = fleet.process(name);
        return starts !== 1 || !running;
      }).join(', ') || 'none (every service came back by itself)'
    }`,
  ];
  for (const line of lines) log(line);
  return lines;
}
