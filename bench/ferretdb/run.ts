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
 * It prints updates/s per build, the ratio patched/stock, and how many acknowledged increments
 * each build lost. It stops the servers, drops their databases, and stops PostgreSQL if it
 * started it. Measuring takes DURATION x ROUNDS x 6 seconds, bounded at 100 s.
 *
 *   pnpm bench:ferretdb            (DURATION=seconds per round, default 1; ROUNDS=n, default 4)
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import mongoose, { type Connection } from 'mongoose';

const root = path.resolve(__dirname, '../..');
const duration = Number(process.env.DURATION ?? 1);
const rounds = Number(process.env.ROUNDS ?? 4);
const WRITERS = 20;
const MEASURE_LIMIT_MS = 100_000;

const times = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));

function infra(...args: string[]): string {
  return execFileSync('bash', [path.join(root, 'scripts/infra.sh'), ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

function exported(output: string, name: string): string {
  const value = new RegExp(`^export ${name}='([^']*)'`, 'm').exec(output)?.[1];
  if (value === undefined) throw new Error(`scripts/infra.sh printed no ${name}`);
  return value;
}

async function sparePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Server {
  name: 'stock' | 'patched';
  database: string;
  child?: ChildProcess;
  connection?: Connection;
}

async function start(server: Server, binary: string, pgUrl: string): Promise<void> {
  infra('pg-db', 'create', server.database);
  const port = await sparePort();
  const child = spawn(
    binary,
    [`-listen-addr=127.0.0.1:${port}`, `-postgresql-url=${pgUrl}/${server.database}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  server.child = child;
  let log = '';
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const url = `mongodb://pack:pack@127.0.0.1:${port}/?authMechanism=PLAIN`;
  for (let i = 0; ; i += 1) {
    if (child.exitCode !== null) throw new Error(`${server.name} FerretDB exited:\n${log}`);
    if (i > 300) throw new Error(`${server.name} FerretDB does not answer on port ${port}:\n${log}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve(true)).on('error', () => resolve(false));
      socket.unref();
      setTimeout(() => socket.destroy(), 200).unref();
    });
    if (open) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
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
];

/** Runs one case for `seconds`; returns updates/s and the increments the server did not keep. */
async function measure(connection: Connection, c: Case, seconds: number) {
  const collection = connection.collection<{ _id: number; n: number }>(c.collection);
  await collection.deleteMany({});
  const ids = [...new Set(times(c.writers, c.document))];
  await collection.insertMany(ids.map((_id) => ({ _id, n: 0 })));
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
  const kept = (await collection.find({}).toArray()).reduce((sum, document) => sum + document.n, 0);
  return { rate: acknowledged / elapsed, acknowledged, lost: acknowledged - kept };
}

async function stop(servers: Server[], pgStarted: boolean): Promise<void> {
  for (const server of servers) await server.connection?.close().catch(() => undefined);
  await Promise.all(
    servers.map(async ({ child }) => {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(force);
    }),
  );
  for (const server of servers) {
    try {
      infra('pg-db', 'drop', server.database);
    } catch {
      process.stderr.write(`[bench] could not drop PostgreSQL database ${server.database}\n`);
    }
  }
  if (pgStarted) infra('pg-down');
}

async function main(): Promise<void> {
  const binaries = {
    stock: infra('ferretdb-bin', 'stock').trim(),
    patched: infra('ferretdb-bin', 'patched').trim(),
  };
  const pg = infra('pg-up');
  const pgUrl = exported(pg, 'PACK_PG_URL');
  const suffix = randomBytes(3).toString('hex');
  const servers: Server[] = [
    { name: 'stock', database: `bench_ferretdb_stock_${suffix}` },
    { name: 'patched', database: `bench_ferretdb_patched_${suffix}` },
  ];
  let stopping: Promise<void> | undefined;
  const cleanup = () => (stopping ??= stop(servers, exported(pg, 'PACK_PG_STARTED') === '1'));
  const interrupted = () => void cleanup().finally(() => process.exit(130));
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  const limit = setTimeout(() => {
    process.stderr.write(`[bench] measuring took longer than ${MEASURE_LIMIT_MS / 1000} s; stopping\n`);
    void cleanup().finally(() => process.exit(1));
  }, MEASURE_LIMIT_MS);
  try {
    for (const server of servers) await start(server, binaries[server.name], pgUrl);
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
    process.stdout.write(
      [
        `bench/ferretdb: updateOne $inc, stock vs patched FerretDB, ${rounds} x ${duration} s per case and build, ${new Date().toISOString()}`,
        `${'case'.padEnd(32)}${'stock/s'.padStart(10)}${'patched/s'.padStart(12)}${'patched/stock'.padStart(16)}   increments lost (stock / patched)`,
        ...rows,
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
