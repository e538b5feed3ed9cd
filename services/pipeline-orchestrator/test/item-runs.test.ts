import mongoose from 'mongoose';
import { uniqueName } from '@pack/testkit';
import { PIPELINES_COLLECTION, PipelineRepository } from '../src/data/pipeline-repository';
import { SweepRepository } from '../src/data/sweep-repository';

/**
 * Writes to several runs of one Service Item, and the running gauge, on an item with a long
 * history ("no collection growing without bound"; item-runs.ts). They read their
 * candidates through indexed equalities and write each run pinned to its `_id`: the same runs
 * change as with one `updateMany` over the item, whatever its history holds.
 */
describe('runs of a Service Item with thousands of earlier runs', () => {
  const RUNS = 3_000;
  const ITEM = 7;
  let connection: mongoose.Connection;
  let repository: PipelineRepository;
  let pipelines: mongoose.mongo.Collection;

  const stage = (state: string | null) => ({ state });
  const run = (n: number, extra: Record<string, unknown> = {}) => ({
    _id: n,
    service_item_id: ITEM,
    service_id: 1,
    run: n,
    origin: `approval:${n}`,
    latest: false,
    watched: false,
    rev: 0,
    stages: { CONFIG: stage('OK'), VERIFY: stage('OK'), EXECUTION: stage('OK') },
    ...extra,
  });

  beforeAll(async () => {
    connection = await mongoose
      .createConnection(process.env.MONGO_URL!, { dbName: uniqueName('orchestrator_item_runs') })
      .asPromise();
    repository = new PipelineRepository(connection);
    await repository.ensureIndexes();
    await new SweepRepository(connection, PIPELINES_COLLECTION).ensureIndexes();
    pipelines = connection.collection(PIPELINES_COLLECTION);
    const history = Array.from({ length: RUNS }, (_, i) => run(i + 1));
    // Run 2,990 still runs (an earlier supersede missed it: a crash), 2,995 runs and is watched,
    // 2,998 was watched but ended (the sweeper has not let go yet); 2,999 is the listed latest run
    // and runs; 2,997 kept its latest flag (a crash between its insert and the clearing).
    const running = {
      stages: { CONFIG: stage('OK'), VERIFY: stage('WAITING_FOR_RESPONSE'), EXECUTION: stage(null) },
    };
    Object.assign(history[2989]!, running, { watched: true });
    Object.assign(history[2994]!, running, { watched: true });
    Object.assign(history[2997]!, { watched: true });
    Object.assign(history[2996]!, { latest: true });
    Object.assign(history[2998]!, running, { watched: true, latest: true });
    // Another item's running run: never touched.
    history.push(run(RUNS + 1, { service_item_id: ITEM + 1, ...running, watched: true, latest: true }));
    for (let i = 0; i < history.length; i += 1000)
      await pipelines.insertMany(history.slice(i, i + 1000) as never[]);
  });
  afterAll(async () => {
    await connection.dropDatabase();
    await connection.close();
  });

  const ids = async (filter: Record<string, unknown>) =>
    (await pipelines.find(filter, { projection: { _id: 1 }, batchSize: 10_000 }).toArray())
      .map((doc) => doc._id as unknown as number)
      .sort((a, b) => a - b);

  it('the sweeper reads the watched pipelines in id order, a page at a time, the first without an id range', async () => {
    const sweep = new SweepRepository(connection, PIPELINES_COLLECTION);
    const first = await sweep.watched(0, 3);
    expect(first.map((pipeline) => pipeline._id)).toEqual([2990, 2995, 2998]);
    expect(first[0]!.stages.VERIFY.state).toBe('WAITING_FOR_RESPONSE');
    expect((await sweep.watched(2998, 3)).map((pipeline) => pipeline._id)).toEqual([2999, RUNS + 1]);
    expect((await sweep.watched(0, 200)).map((pipeline) => pipeline._id)).toEqual([
      2990,
      2995,
      2998,
      2999,
      RUNS + 1,
    ]);
  });

  it('counts the running pipelines (the gauge) among the watched ones', async () => {
    expect(await repository.countRunning()).toBe(4);
  });

  it("a new run supersedes exactly the item's running earlier runs, and undoing it restores them", async () => {
    await repository.supersedeOlder(ITEM, 3_000, 3_000);
    expect(await ids({ superseded_by: 3_000 })).toEqual([2990, 2995, 2999]);
    const revs = await pipelines.find({ _id: { $in: [2990, 2995, 2999, 2998] } } as never).toArray();
    expect(Object.fromEntries(revs.map((doc) => [doc._id, doc.rev]))).toEqual({
      2990: 1,
      2995: 1,
      2998: 0,
      2999: 1,
    });
    // Again (a redelivery): nothing marked twice.
    await repository.supersedeOlder(ITEM, 3_000, 3_000);
    expect((await pipelines.findOne({ _id: 2990 as never }))?.rev).toBe(1);

    await repository.unsupersede(ITEM, 3_000);
    expect(await ids({ superseded_by: { $exists: true } })).toEqual([]);
  });

  it("a new run takes the item's earlier runs off the list of latest pipelines, later ones and other items kept", async () => {
    await pipelines.updateOne({ _id: 3_000 as never }, { $set: { latest: true } });
    await repository.insert(
      { ...run(5_000), run: 2_998, _id: 5_000, origin: 'approval:late', latest: true } as never,
      [],
    );
    // Run 2,998 (inserted late, out of order): 2,997 left the list, 2,999 and 3,000 are later.
    expect(await ids({ service_item_id: ITEM, latest: true })).toEqual([2999, 3000]);
    expect(await ids({ latest: true, service_item_id: ITEM + 1 })).toEqual([RUNS + 1]);
  });
});
