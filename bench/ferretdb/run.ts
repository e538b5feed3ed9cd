/**
 * bench/ferretdb: what our FerretDB patch (tools/ferretdb/patches: locks from the query to the
 * write-back, per document for filters that pin _id, else per collection) costs in update
 * throughput.
 *
 * Builds the stock and the patched binary if needed (scripts/infra.sh ferretdb-bin), starts both
 * on spare ports against the private PostgreSQL of scripts/infra.sh (a throw-away database
 * each), and measures `updateOne({_id}, {$inc})` on one collection, alternating between the two
 * builds so that the machine's other load affects both alike:
 *   20 writers, distinct documents   20 concurrent loops, each on its own document
 *   20 writers, one document         20 concurrent loops on the same document
 *   1 writer                         one loop on one document
 *   20 writers, distinct documents, in 1,000 / in 100,000 documents
 *                                    the same among other documents (loaded once per server
 *                                    before measuring): an update by _id must not slow down
 *                                    as the collection grows (patch 0002 serves `_id` equality
 *                                    from the _id index; stock FerretDB scans the table)
 * It prints updates/s per build, the ratio patched/stock, how many acknowledged increments
 * each build lost, the 100,000/1,000 throughput ratio per build (target: 0.8 or more), and the
 * p50 of a point read (findOne by _id) at both sizes. It stops the servers, drops their
 * databases, and stops PostgreSQL if it started it. Measuring takes DURATION x ROUNDS x 10
 * seconds, bounded at 150 s (loading the documents comes before).
 *
 *   pnpm bench:ferretdb            (DURATION=seconds per round, default 1; ROUNDS=n, default 4)
 */
import mongoose, { type Connection } from 'mongoose';
import { startPrivateFerret, type PrivateFerret } from '@pack/testkit';

const duration = Number(process.env.DURATION ?? 1);
const rounds = Number(process.env.ROUNDS ?? 4);
const WRITERS = 20;
const MEASURE_LIMIT_MS = 150_000;

const times = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));

interface Server {
  name: 'stock' | 'patched';
  ferret?: PrivateFerret;
  connection?: Connection;
}

async function start(server: Server): Promise<void> {
  server.ferret = await startPrivateFerret(server.name, `bench_ferretdb_${server.name}`);
  const url = server.ferret.url;
  // Room for every writer at once, so the server, not the driver's pool, decides the order.
  server.connection = await mongoose
    .createConnection(url, { dbName: 'bench', maxPoolSize: WRITERS + 5, maxConnecting: WRITERS })
    .asPromise();
  await Promise.all(times(WRITERS, () => server.connection!.db!.command({ ping: 1 })));
}

interface Case {
  name: string;
  collection: string;
  writers: number;
  document: (writer: number) => number;
  /** Documents in the collection (loaded once, before measuring); default: the writers' only. */
  size?: number;
}

const cases: Case[] = [
  {
    name: `${WRITERS} writers, distinct documents`,
    collection: 'distinct',
    writers: WRITERS,
    document: (w) => w,
  },
  { name: `${WRITERS} writers, one document`, collection: 'hot', writers: WRITERS, document: () => 0 },
  { name: '1 writer, one document', collection: 'single', writers: 1, document: () => 0 },
  ...[1_000, 100_000].map((size) => ({
    name: `${WRITERS} writers, distinct, in ${size.toLocaleString('en-US')}`,
    collection: `sized_${size}`,
    writers: WRITERS,
    document: (w: number) => (w * size) / WRITERS, // spread over the collection
    size,
  })),
];

/** Loads the sized cases' collections: _id 0..size-1, each {n: 0}. */
async function load(connection: Connection): Promise<void> {
  for (const c of cases) {
    if (!c.size) continue;
    const collection = connection.collection<{ _id: number; n: number }>(c.collection);
    await collection.deleteMany({});
    for (let start = 0; start < c.size; start += 5000) {
      const batch = times(Math.min(5000, c.size - start), (i) => ({ _id: start + i, n: 0 }));
      await collection.insertMany(batch);
    }
  }
}

/** p50 of findOne by _id over 50 reads, ms. */
async function pointRead(connection: Connection, c: Case): Promise<number> {
  const collection = connection.collection<{ _id: number; n: number }>(c.collection);
  const samples: number[] = [];
  for (let i = 0; i < 50; i += 1) {
    const started = process.hrtime.bigint();
    await collection.findOne({ _id: (i * 7919) % c.size! });
    samples.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return samples.sort((a, b) => a - b)[24]!;
}

/** Runs one case for `seconds`; returns updates/s and the increments the server did not keep. */
async function measure(connection: Connection, c: Case, seconds: number) {
  const collection = connection.collection<{ _id: number; n: number }>(c.collection);
  const ids = [...new Set(times(c.writers, c.document))];
  if (!c.size) {
    await collection.deleteMany({});
    await collection.insertMany(ids.map((_id) => ({ _id, n: 0 })));
  }
  const sum = async () =>
    (await collection.find({ _id: { $in: ids } }).toArray()).reduce(
      (total, document) => total + document.n,
      0,
    );
  const before = await sum();
  let acknowledged = 0;
  const started = process.hrtime.bigint();
  const end = Date.now() + seconds * 1000;
  await Promise.all(
    times(c.writers, async (writer) => {
      while (Date.now() < end) {
        await collection.updateOne({ _id: c.document(writer) }, { $inc: { n: 1 } });
        acknowledged += 1;
      }
    }),
  );
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  const kept = (await sum()) - before;
  return { rate: acknowledged / elapsed, acknowledged, lost: acknowledged - kept };
}

async function stop(servers: Server[]): Promise<void> {
  for (const server of servers) await server.connection?.close().catch(() => undefined);
  // The last started first: the first one stops PostgreSQL if it started it.
  for (const { ferret } of [...servers].reverse()) {
    await ferret?.stop().catch((error: Error) => {
      process.stderr.write(`[bench] could not stop FerretDB on ${ferret.database}: ${error.message}\n`);
    });
  }
}

async function main(): Promise<void> {
  const servers: Server[] = [{ name: 'stock' }, { name: 'patched' }];
  let stopping: Promise<void> | undefined;
  const cleanup = () => (stopping ??= stop(servers));
  const interrupted = () => void cleanup().finally(() => process.exit(130));
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  const limit = setTimeout(() => {
    process.stderr.write(`[bench] measuring took longer than ${MEASURE_LIMIT_MS / 1000} s; stopping\n`);
    void cleanup().finally(() => process.exit(1));
  }, MEASURE_LIMIT_MS);
  try {
    for (const server of servers) await start(server);
    clearTimeout(limit);
    for (const server of servers) await load(server.connection!);
    limit.refresh();
    for (const server of servers) for (const c of cases) await measure(server.connection!, c, 0.3); // warm up

    const zero = () => ({ rate: 0, acknowledged: 0, lost: 0 });
    const results = cases.map(() => ({ stock: zero(), patched: zero() }));
    for (let round = 0; round < rounds; round += 1) {
      for (const [i, c] of cases.entries()) {
        for (const server of servers) {
          const { rate, acknowledged, lost } = await measure(server.connection!, c, duration);
          results[i]![server.name].rate += rate / rounds;
          results[i]![server.name].acknowledged += acknowledged;
          results[i]![server.name].lost += lost;
        }
      }
    }

    const rows = cases.map((c, i) => {
      const { stock, patched } = results[i]!;
      return [
        c.name.padEnd(32),
        stock.rate.toFixed(0).padStart(10),
        patched.rate.toFixed(0).padStart(12),
        (patched.rate / stock.rate).toFixed(2).padStart(16),
        `   ${stock.lost} of ${stock.acknowledged} / ${patched.lost} of ${patched.acknowledged}`,
      ].join('');
    });
    const sized = cases.flatMap((c, i) => (c.size ? [{ c, result: results[i]! }] : []));
    const [small, large] = [sized[0]!, sized[sized.length - 1]!];
    const growth = (name: Server['name']) => (large.result[name].rate / small.result[name].rate).toFixed(2);
    const reads: string[] = [];
    for (const server of servers) {
      const p50 = await Promise.all(sized.map(({ c }) => pointRead(server.connection!, c)));
      reads.push(
        `${server.name} ${p50.map((ms, i) => `${ms.toFixed(1)} ms in ${sized[i]!.c.size}`).join(', ')}`,
      );
    }
    process.stdout.write(
      [
        `bench/ferretdb: updateOne $inc, stock vs patched FerretDB, ${rounds} x ${duration} s per case and build, ${new Date().toISOString()}`,
        `${'case'.padEnd(32)}${'stock/s'.padStart(10)}${'patched/s'.padStart(12)}${'patched/stock'.padStart(16)}   increments lost (stock / patched)`,
        ...rows,
        `update throughput in ${large.c.size} / in ${small.c.size} documents (target 0.8 or more): stock ${growth('stock')}, patched ${growth('patched')}`,
        `point read p50 (findOne by _id): ${reads.join('; ')}`,
        '',
      ].join('\n'),
    );
  } finally {
    clearTimeout(limit);
    await cleanup();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
