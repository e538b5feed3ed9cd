/**
 * bench/partitions: the partition scenarios of test/partitions (hosts in network namespaces of
 * their own, links cut and slowed while pipelines with webhooks run) with a larger load, and the
 * checker's table of what each one counted: declarations submitted, ended OK, FAILED with a
 * reason, stuck; provider calls beyond one per stage; repeated webhook-ids; queues not empty
 * after the heal; acknowledged writes lost; duration, a pipeline's mean and slowest time.
 *
 * The scenarios are the suite's own, run by jest with PACK_PARTITION_SCALE times the pipelines
 * (among them a node of the RabbitMQ cluster in namespaces isolated), plus one the suite leaves
 * out for CI's time (test/partitions/cluster-split.bench.ts): the cluster split 1|2, with service
 * replicas on both sides. The table is printed whether or not a scenario failed (the exit status
 * says which). Root only, as the suite (network namespaces).
 *
 *   pnpm bench:partitions [jest arguments]     (PACK_PARTITION_SCALE=4)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '@pack/testkit';
import { table, type CheckRow } from '../../test/partitions/checker';

const scale = process.env.PACK_PARTITION_SCALE ?? '4';
const dir = mkdtempSync(path.join(os.tmpdir(), 'pack-partitions-'));
const rowsFile = path.join(dir, 'rows.jsonl');
// Further arguments go to jest: `pnpm bench:partitions -t cluster` runs the cluster's alone.
const files = ['**/test/partitions/partitions.test.ts', '**/test/partitions/cluster-split.bench.ts'];
const run = spawnSync('npx', ['jest', '--runInBand', ...process.argv.slice(2), '--testMatch', ...files], {
  cwd: REPO_ROOT,
  stdio: 'inherit',
  env: { ...process.env, PACK_PARTITION_SCALE: scale, PACK_PARTITION_ROWS: rowsFile },
});
let rows: CheckRow[] = [];
try {
  rows = readFileSync(rowsFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as CheckRow);
} catch {
  // No scenario got as far as the checker.
}
rmSync(dir, { recursive: true, force: true });
const printed = rows.length ? table(rows) : '(no scenario got as far as the checker)';
process.stdout.write(`\npartition scenarios, ${scale} x the suite's load:\n\n${printed}\n`);
process.exit(run.status ?? 1);
