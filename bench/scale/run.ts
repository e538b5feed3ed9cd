/**
 * bench/scale: does a list cost the same at any size? (docs/decisions/0033)
 *
 * For every list endpoint (bench/scale/lists.ts: its collection, its service's indexes, the
 * filters users apply, the sort and projection its repository passes), loads 1,000, then
 * 10,000, then 100,000 documents straight into the collection, and at each size times, through
 * findPage (packages/db, what every list endpoint calls): the first page, a middle page and the
 * last page by `offset` (20 items, count included), the pages by key (`after`) that follow the
 * middle and the last page's first item (21 items asked, as the API asks one more to know
 * whether a next page exists; count included), and a point read by _id. It prints p50/p99 per
 * list, filter and size, and the growth factor from the smallest to the largest size (target:
 * under 2x for the first, last and keyed pages; an offset page in the middle costs its depth).
 *
 * The server: our patched FerretDB, started on a spare port against a throw-away database of the
 * private PostgreSQL of scripts/infra.sh (like bench/ferretdb), or the one on SCALE_MONGO_URL.
 * With BENCH_MONGODB_URL (a MongoDB 7), it also prints MongoDB's plans (explain) of the same
 * first-page queries; without it, it says it could not.
 *
 * After each load it runs `compact` (FerretDB: VACUUM ANALYZE), as autovacuum would within a
 * minute; COMPACT=0 measures right after the load instead (pages skipped are then read from
 * the table, not the index alone).
 *
 *   pnpm bench:scale     (SIZES=1000,10000,100000  REPS=9 timings per page  LISTS=substring  COMPACT=0)
 *   SIZES=1000,100000,1000000 LISTS=change_instances pnpm bench:scale    (a million, one list)
 */
import { randomBytes } from 'node:crypto';
import mongoose, { type Connection, type mongo } from 'mongoose';
import type { KeyPart } from '@pack/contracts';
import { findPage } from '@pack/db';
import { LISTS, type List } from './lists';
import { startPrivateFerret, type PrivateFerret } from '@pack/testkit';

const sizes = (process.env.SIZES ?? '1000,10000,100000').split(',').map(Number);
const reps = Number(process.env.REPS ?? 9);
const only = process.env.LISTS;
const compact = process.env.COMPACT !== '0';
const LIMIT = 20;

/** Tops the collection up to `size` documents (_id 1..size, or the list's own ids). */
async function load(collection: mongo.Collection, list: List, from: number, size: number): Promise<void> {
  for (let start = from + 1; start <= size; start += 2000) {
    const batch = Array.from({ length: Math.min(2000, size - start + 1) }, (_, i) => list.make(start + i));
    await collection.insertMany(batch, { ordered: false });
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;

async function timed(run: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  await run(); // warm
  const samples: number[] = [];
  for (let i = 0; i < reps; i += 1) {
    const started = process.hrtime.bigint();
    await run();
    samples.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) };
}

interface Row {
  list: string;
  filter: string;
  size: number;
  count: number;
  first: { p50: number; p99: number };
  middle: { p50: number; p99: number };
  last: { p50: number; p99: number };
  afterMiddle: { p50: number; p99: number };
  afterLast: { p50: number; p99: number };
  point: { p50: number; p99: number };
}

async function measure(connection: Connection, list: List, size: number): Promise<Row[]> {
  const collection = connection.collection<mongo.Document>(list.collection);
  const rows: Row[] = [];
  for (const filter of list.filters) {
    const page = (offset: number) =>
      findPage(collection, filter.query, {
        sort: list.sort,
        limit: LIMIT,
        offset,
        projection: list.projection,
        unique: list.unique,
      });
    const byKey = (after: KeyPart[]) =>
      findPage(collection, filter.query, {
        sort: list.sort,
        limit: LIMIT + 1,
        after,
        projection: list.projection,
      });
    const { count, items } = await page(0);
    const last = count === 0 ? 0 : Math.floor((count - 1) / LIMIT) * LIMIT;
    const middle = Math.floor(last / LIMIT / 2) * LIMIT;
    const someId = (items[items.length - 1] ?? list.make(1))._id as unknown;
    const keyOf = async (offset: number) => {
      const first = (await page(offset)).items[0] ?? items[0] ?? list.make(1);
      return Object.keys(list.sort as Record<string, unknown>).map((field) => first[field] as KeyPart);
    };
    const [middleKey, lastKey] = [await keyOf(middle), await keyOf(last)];
    rows.push({
      list: list.endpoint,
      filter: filter.name,
      size,
      count,
      first: await timed(() => page(0)),
      middle: await timed(() => page(middle)),
      last: await timed(() => page(last)),
      afterMiddle: await timed(() => byKey(middleKey)),
      afterLast: await timed(() => byKey(lastKey)),
      point: await timed(() => collection.findOne({ _id: someId } as mongo.Filter<mongo.Document>)),
    });
  }
  return rows;
}

const ms = (t: { p50: number; p99: number }) => `${t.p50.toFixed(1)}/${t.p99.toFixed(1)}`.padStart(13);

function report(rows: Row[]): string {
  const lines = [
    `${'list'.padEnd(36)}${'filter'.padEnd(19)}${'size'.padStart(9)}${'count'.padStart(9)}` +
      `${'first p50/p99'.padStart(14)}${'middle'.padStart(14)}${'last'.padStart(14)}` +
      `${'after middle'.padStart(14)}${'after last'.padStart(14)}${'point read'.padStart(14)}`,
  ];
  for (const row of rows) {
    lines.push(
      `${row.list.padEnd(36)}${row.filter.padEnd(19)}${String(row.size).padStart(9)}${String(row.count).padStart(9)} ` +
        `${ms(row.first)} ${ms(row.middle)} ${ms(row.last)} ${ms(row.afterMiddle)} ${ms(row.afterLast)} ${ms(row.point)}`,
    );
  }
  const [small, large] = [Math.min(...sizes), Math.max(...sizes)];
  lines.push(
    '',
    `growth ${small} -> ${large} (p50 ratio; target under 2x but for the middle page by offset, which costs its depth)`,
  );
  let worst = 0;
  let worstKeyed = 0;
  const kinds = ['first', 'middle', 'last', 'afterMiddle', 'afterLast', 'point'] as const;
  for (const row of rows.filter((r) => r.size === large)) {
    const base = rows.find((r) => r.size === small && r.list === row.list && r.filter === row.filter);
    if (!base) continue;
    const ratio = (k: (typeof kinds)[number]) => row[k].p50 / Math.max(base[k].p50, 0.5);
    const ratios = kinds.map(ratio);
    worst = Math.max(worst, row.first.p50, row.middle.p50, row.last.p50);
    worstKeyed = Math.max(worstKeyed, row.first.p50, row.afterMiddle.p50, row.afterLast.p50);
    lines.push(
      `${row.list.padEnd(36)}${row.filter.padEnd(19)} first ${ratios[0]!.toFixed(2)}x  middle ${ratios[1]!.toFixed(2)}x  ` +
        `last ${ratios[2]!.toFixed(2)}x  after middle ${ratios[3]!.toFixed(2)}x  after last ${ratios[4]!.toFixed(2)}x  ` +
        `point ${ratios[5]!.toFixed(2)}x`,
    );
  }
  lines.push(`slowest page by offset p50 at ${large}: ${worst.toFixed(1)} ms`);
  lines.push(`slowest first or keyed page p50 at ${large}: ${worstKeyed.toFixed(1)} ms (bound: 50 ms)`);
  return lines.join('\n');
}

/** MongoDB's plans for the first pages, when a MongoDB is reachable. */
async function explainOnMongo(lists: List[]): Promise<string> {
  const url = process.env.BENCH_MONGODB_URL;
  if (!url)
    return 'MongoDB plans: not run (no MongoDB reachable; set BENCH_MONGODB_URL to a MongoDB 7 to print them)';
  const connection = await mongoose
    .createConnection(url, { dbName: `bench_scale_${Date.now()}` })
    .asPromise();
  const lines = ['MongoDB plans of the first pages (1,000 documents per list):'];
  try {
    for (const list of lists) {
      const collection = connection.collection(list.collection);
      for (const index of list.indexes) await collection.createIndex(index);
      if ((await collection.estimatedDocumentCount()) === 0) await load(collection, list, 0, 1000);
      for (const filter of list.filters) {
        const plan = (await collection
          .find(filter.query, { sort: list.sort, limit: LIMIT, projection: list.projection })
          .explain('queryPlanner')) as { queryPlanner: { winningPlan: unknown } };
        const stages = JSON.stringify(plan.queryPlanner.winningPlan).match(/"stage":"[A-Z_]+"/g) ?? [];
        lines.push(
          `${list.endpoint.padEnd(36)}${filter.name.padEnd(19)}${stages.map((s) => s.slice(9, -1)).join(' <- ')}`,
        );
      }
    }
    await connection.db!.dropDatabase();
  } catch (error) {
    lines.push(
      `MongoDB plans: could not run them (${error instanceof Error ? error.message : String(error)})`,
    );
  } finally {
    await connection.close();
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const lists = LISTS.filter(
    (list) => !only || list.endpoint.includes(only) || list.collection.includes(only),
  );
  const server: Pick<PrivateFerret, 'url' | 'stop'> = process.env.SCALE_MONGO_URL
    ? { url: process.env.SCALE_MONGO_URL, stop: () => Promise.resolve() }
    : await startPrivateFerret('patched', 'bench_scale');
  const dbName = `bench_scale_${randomBytes(3).toString('hex')}`;
  const connection = await mongoose.createConnection(server.url, { dbName }).asPromise();
  const rows: Row[] = [];
  try {
    const loaded = new Map<string, number>();
    for (const list of lists) {
      const collection = connection.collection(list.collection);
      for (const index of list.indexes) await collection.createIndex(index);
    }
    for (const size of [...sizes].sort((a, b) => a - b)) {
      for (const list of lists) {
        const collection = connection.collection(list.collection);
        if (list.make(1)._id !== undefined) {
          const loadStarted = Date.now();
          await load(collection, list, loaded.get(list.collection) ?? 0, size);
          process.stderr.write(
            `[bench] ${list.collection}: ${size} loaded in ${(Date.now() - loadStarted) / 1000} s\n`,
          );
          loaded.set(list.collection, size);
          // What autovacuum does within a minute of a load: FerretDB's compact is VACUUM ANALYZE,
          // which marks the table's pages all-visible, so skips can read an index alone.
          if (compact) await connection.db!.command({ compact: list.collection });
        }
        rows.push(...(await measure(connection, list, size)));
        process.stderr.write(`[bench] ${list.endpoint} at ${size}: done\n`);
      }
    }
    const load1 = (await import('node:os')).loadavg()[0]!.toFixed(1);
    process.stdout.write(
      [
        `bench/scale: findPage (20 items + count) per list endpoint, ms p50/p99 of ${reps} runs, ${new Date().toISOString()}, load average ${load1}, ${compact ? 'compacted after each load' : 'right after each load (COMPACT=0)'}`,
        report(rows),
        '',
        await explainOnMongo(lists),
        '',
      ].join('\n'),
    );
  } finally {
    await connection.db?.dropDatabase().catch(() => undefined);
    await connection.close();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
