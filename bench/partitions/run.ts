/**
 * bench/partitions: the partition scenarios of test/partitions (hosts in network namespaces of
 * their own, links cut and slowed while pipelines with webhooks run) with a larger load, and the
 * checker's table of what each one counted: declarations submitted, ended OK, FAILED with a
 * reason, stuck; provider calls beyond one per stage; repeated webhook-ids; queues not empty
 * after the heal; acknowledged writes lost; duration, a pipeline's mean and slowest time.
 *
 * The scenarios are the suite's own, run by jest with PACK_PARTITION_SCALE times the pipelines
 * (among them a node of the RabbitMQ cluster in namespaces isolated), plus one the suite leaves
 * out for CI's time: the cluster split 1|2, with service replicas on both sides; the table is printed whether or not a scenario failed (the exit status says which). Root only,
 * as the suite (network namespaces).
 *
 *   pnpm bench:partitions [jest arguments]     (PACK_PARTITION_SCALE=4)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '@pack/testkit';

const scale = process.env.PACK_PARTITION_SCALE ?? '4';
const dir = mkdtempSync(path.join(os.tmpdir(), 'pack-partitions-'));
const tableFile = path.join(dir, 'table.md');
// Further arguments go to jest: `pnpm bench:partitions -t cluster` runs the cluster's alone.
const run = spawnSync('npx', ['jest', 'test/partitions/partitions.test.ts', ...process.argv.slice(2)], {
  cwd: REPO_ROOT,
  stdio: 'inherit',
  env: { ...process.env, PACK_PARTITION_SCALE: scale, PACK_PARTITION_TABLE: tableFile },
});
let table = '';
try {
  table = readFileSync(tableFile, 'utf8');
} catch {
  table = '(no scenario got as far as the checker)';
}
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`\npartition scenarios, ${scale} x the suite's load:\n\n${table}\n`);
process.exit(run.status ?? 1);
