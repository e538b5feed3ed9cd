/**
 * bench/item-runs: the writes to several runs of one Service Item, and the running gauge, as the
 * item's history grows (services/pipeline-orchestrator/src/data/item-runs.ts).
 *
 * Loads 1,000, then 10,000, then 30,000 earlier runs of one item (two of them running) into a
 * throw-away database and times, at each size, the shapes of before (one `updateMany` over the
 * item with a range, `$exists` and the running stages; a `countDocuments` of the running stages)
 * against ItemRuns (indexed equalities, then writes pinned to an `_id`). Prints the median and
 * p90 of REPS calls per shape and the ratio before/after; the growth from the first size to the last.
 *
 *   pnpm bench:item-runs     (SIZES=1000,10000,30000  REPS=9)
 */
import mongoose from 'mongoose';
import { STAGES } from '@pack/contracts';
import { resolveInfra, uniqueName } from '@pack/testkit';
import { ItemRuns } from '../../services/pipeline-orchestrator/src/data/item-runs';
import { RUNNING_STATES } from '../../services/pipeline-orchestrator/src/domain/records/pipeline-records';

const sizes = (process.env.SIZES ?? '1000,10000,30000').split(',').map(Number);
const reps = Number(process.env.REPS ?? 9);
const ITEM = 1;
const RUNNING = {
  $or: STAGES.map((stage) => ({ [`stages.${stage}.state`]: { $in: [...RUNNING_STATES] } })),
};
const doc = (n: number) => ({
  _id: n,
  service_item_id: ITEM,
  run: n,
  origin: `approval:${n}`,
  latest: false,
  watched: n % 1000 === 500,
  rev: 0,
  stages: {
    CONFIG: { state: 'OK' },
    VERIFY: { state: n % 1000 === 500 ? 'WAITING_FOR_RESPONSE' : 'OK' },
    EXECUTION: { state: null },
  },
});

async function time(work: () => Promise<unknown>): Promise<{ p50: number; p90: number }> {
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const began = performance.now();
    await work();
    times.push(performance.now() - began);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(reps / 2)]!, p90: times[Math.min(reps - 1, Math.floor(reps * 0.9))]! };
}

async function main(): Promise<void> {
  const infra = await resolveInfra();
  const connection = await mongoose
    .createConnection(infra.mongoUrl, { dbName: uniqueName('bench_item_runs') })
    .asPromise();
  try {
    const pipelines = connection.collection('pipelines');
    await pipelines.createIndex({ origin: 1 }, { unique: true });
    await pipelines.createIndex({ service_item_id: 1, run: -1 });
    await pipelines.createIndex({ watched: 1 });
    await pipelines.createIndex({ latest: 1, _id: -1 });
    const itemRuns = new ItemRuns(pipelines as never);
    process.stdout.write(`bench/item-runs: ${reps} calls per shape, ${new Date().toISOString()}\n`);
    process.stdout.write('runs    shape              before p50/p90 ms    after p50/p90 ms   before/after\n');
    let loaded = 0;
    const first = new Map<string, number>();
    for (const size of sizes) {
      for (let from = loaded + 1; from <= size; from += 2000)
        await pipelines.insertMany(
          Array.from({ length: Math.min(2000, size - from + 1) }, (_, i) => doc(from + i)) as never[],
        );
      loaded = size;
      const next = size + 1;
      const shapes: [string, () => Promise<unknown>, () => Promise<unknown>][] = [
        [
          'supersede older',
          () =>
            pipelines.updateMany(
              { service_item_id: ITEM, run: { $lt: next }, superseded_by: { $exists: false }, ...RUNNING },
              { $set: { superseded_by: -1 }, $inc: { rev: 1 } },
            ),
          () => itemRuns.supersedeOlder(ITEM, next, -1),
        ],
        [
          'clear older latest',
          () =>
            pipelines.updateMany(
              { service_item_id: ITEM, latest: true, run: { $lt: next } },
              { $set: { latest: false } },
            ),
          () => itemRuns.clearOlderLatest(ITEM, next),
        ],
        ['count running', () => pipelines.countDocuments(RUNNING), () => itemRuns.countRunning()],
      ];
      for (const [name, before, after] of shapes) {
        const [old, now] = [await time(before), await time(after)];
        first.set(`${name} before`, first.get(`${name} before`) ?? old.p50);
        first.set(`${name} after`, first.get(`${name} after`) ?? now.p50);
        process.stdout.write(
          `${String(size).padEnd(7)} ${name.padEnd(18)} ${`${old.p50.toFixed(1)} / ${old.p90.toFixed(1)}`.padStart(17)}    ${`${now.p50.toFixed(1)} / ${now.p90.toFixed(1)}`.padStart(16)}   ${(old.p50 / now.p50).toFixed(1).padStart(8)}\n`,
        );
        if (size === sizes.at(-1))
          process.stdout.write(
            `        growth from ${sizes[0]} runs: before ${(old.p50 / first.get(`${name} before`)!).toFixed(1)}x, after ${(now.p50 / first.get(`${name} after`)!).toFixed(1)}x\n`,
          );
      }
    }
  } finally {
    await connection.dropDatabase().catch(() => undefined);
    await connection.close();
    await infra.stop?.();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
