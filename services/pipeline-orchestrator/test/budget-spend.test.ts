import mongoose, { mongo } from 'mongoose';
import { uniqueName } from '@pack/testkit';
import {
  BUDGET_CALLS_COLLECTION,
  BUDGET_SPEND_COLLECTION,
  BudgetRepository,
} from '../src/data/budget-repository';
import { toUnits } from '../src/domain/budgets/units';

/**
 * A Service's monthly spend on the real database (docs/decisions/0046): every call counted once
 * by its request id, whichever replica counts it and however often its result is delivered, and
 * a crash between the writes of a count leaves nothing a repeat counts twice.
 */
describe('AI budget spend, counted once per request id', () => {
  let connection: mongoose.Connection;
  const MONTH = '2026-11';
  const call = (request_id: string, cost: string, unpriced = false) => ({
    request_id,
    service_id: 7,
    month: MONTH,
    units: toUnits(cost),
    unpriced,
  });

  beforeAll(async () => {
    connection = await mongoose
      .createConnection(process.env.MONGO_URL!, { dbName: uniqueName('orchestrator_budgets') })
      .asPromise();
  });
  afterAll(async () => {
    await connection.dropDatabase();
    await connection.close();
  });

  it('two replicas counting the same 40 results, each delivered twice, add each call once and exactly', async () => {
    const [a, b] = [new BudgetRepository(connection), new BudgetRepository(connection)];
    const calls = Array.from({ length: 40 }, (_, i) => call(`pipeline-${i}-CONFIG-1`, '0.000026'));
    calls.push(call('pipeline-99-VERIFY-1', '0', true));
    const counted = await Promise.all(
      calls.flatMap((each) => [a.count(each), b.count(each), a.count(each), b.count(each)]),
    );
    expect(counted.filter(Boolean)).toHaveLength(41);
    // Settled later, and repeats after settling count nothing either.
    await Promise.all([a.flush(), b.flush()]);
    expect(await a.count(calls[3]!)).toBe(false);
    await a.flush();
    expect(await b.spend(7, MONTH)).toEqual({ units: toUnits('0.00104'), unpriced_calls: 1 });
    const month = await connection
      .collection(BUDGET_SPEND_COLLECTION)
      .findOne({ _id: `7:${MONTH}` } as never);
    expect(Object.keys(month?.adding ?? {})).toEqual([]);
  });

  it('three replicas, each counting every result three times while they settle, add each call once', async () => {
    const replicas = [1, 2, 3].map(() => new BudgetRepository(connection));
    const calls = Array.from({ length: 60 }, (_, i) => ({
      ...call(`race-${i}-VERIFY-1`, '0.5'),
      service_id: 9,
    }));
    let settling = true;
    const settler = (async () => {
      while (settling) {
        await Promise.all(replicas.map((replica) => replica.flush()));
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const counted = await Promise.all(
      calls.flatMap((each, i) =>
        [0, 1, 2, 3, 4, 5, 6, 7, 8].map(async (n) => {
          await new Promise((resolve) => setTimeout(resolve, (i * 3 + n * 11) % 40));
          return replicas[n % 3]!.count(each);
        }),
      ),
    );
    settling = false;
    await settler;
    await Promise.all(replicas.map((replica) => replica.flush()));
    expect(counted.filter(Boolean)).toHaveLength(60);
    expect(await replicas[0]!.spend(9, MONTH)).toEqual({ units: toUnits('30'), unpriced_calls: 0 });
  });

  it('"the calls of one group commit share the insert and the $inc" (0052): five results within the linger, one command with their ledger entries, each counted once', async () => {
    const monitored = await mongoose
      .createConnection(process.env.MONGO_URL!, { dbName: connection.name, monitorCommands: true })
      .asPromise();
    try {
      const commands: string[] = [];
      monitored.getClient().on('commandStarted', (event) => {
        const target = (event.command as Record<string, unknown>)[event.commandName];
        if (event.commandName === 'insert' || event.commandName === 'update')
          commands.push(`${event.commandName} ${String(target)}`);
      });
      const store = new BudgetRepository(monitored, 40);
      // A call alone, the month's first: its ledger entry, the add and the month's document, one command.
      expect(await store.count({ ...call('linger-0-CONFIG-1', '1'), service_id: 14 })).toBe(true);
      expect(commands).toEqual([`update ${BUDGET_SPEND_COLLECTION}`]);
      commands.length = 0;
      const counting = [1, 2, 3, 4, 5].map(async (i) => {
        await new Promise((resolve) => setTimeout(resolve, i * 4));
        return store.count({ ...call(`linger-${i}-CONFIG-1`, '0.25', i === 5), service_id: 14 });
      });
      expect(await Promise.all(counting)).toEqual([true, true, true, true, true]);
      expect(commands).toEqual([`update ${BUDGET_SPEND_COLLECTION}`]);
      // A redelivery of one of them counts nothing; after settling, nothing is left marked.
      expect(await store.count({ ...call('linger-3-CONFIG-1', '0.25'), service_id: 14 })).toBe(false);
      await store.flush();
      expect(await store.spend(14, MONTH)).toEqual({ units: toUnits('2.25'), unpriced_calls: 1 });
    } finally {
      await monitored.close();
    }
  });

  it("a group's command that meets a call counted elsewhere stops and adds nothing: each of its calls is then counted once", async () => {
    await new BudgetRepository(connection).count({ ...call('group-0-CONFIG-1', '1'), service_id: 15 });
    const groupAdd = paused();
    const group = new BudgetRepository(
      slowed(connection, BUDGET_SPEND_COLLECTION, 'bulkWrite', groupAdd),
      30,
    );
    const [x, y] = ['group-1-CONFIG-1', 'group-2-CONFIG-1'].map((id) => ({
      ...call(id, '0.5'),
      service_id: 15,
    }));
    const counting = Promise.all([group.count(x!), group.count(y!)]);
    await groupAdd.reached; // the group's command waits
    expect(await new BudgetRepository(connection).count(x!)).toBe(true); // a redelivery elsewhere adds x
    groupAdd.open();
    expect(await counting).toEqual([false, true]);
    await group.flush();
    expect(await group.spend(15, MONTH)).toEqual({ units: toUnits('2'), unpriced_calls: 0 });
  });

  it("a repeat whose add came before the first counter's keeps its count when the first counter settles before the repeat looks", async () => {
    const the = { ...call('first-is-slow-CONFIG-1', '0.75'), service_id: 12 };
    // The first counter's command stops between its ledger entry and its month add (the server
    // runs a command's statements one by one: another count may come in between).
    const firstAdd = paused();
    const first = new BudgetRepository(splitCommand(connection, firstAdd));
    // The repeat stops after its add, before it reads whether the call was settled meanwhile.
    const repeatLook = paused((options) => Boolean(options?.projection?.applied));
    const repeat = new BudgetRepository(slowed(connection, BUDGET_SPEND_COLLECTION, 'findOne', repeatLook));
    const counting = first.count(the);
    await firstAdd.reached;
    const repeating = repeat.count(the);
    await repeatLook.reached;
    firstAdd.open();
    expect(await counting).toBe(false); // the repeat's mark was there
    await first.flush();
    repeatLook.open();
    expect(await repeating).toBe(true);
    expect(await repeat.spend(12, MONTH)).toEqual({ units: toUnits('0.75'), unpriced_calls: 0 });
    expect(await new BudgetRepository(connection).count(the)).toBe(false);
    expect(await repeat.spend(12, MONTH)).toEqual({ units: toUnits('0.75'), unpriced_calls: 0 });
  });

  it('a repeat after a crash between the ledger entry and the month add adds once; one after the add, none', async () => {
    const store = new BudgetRepository(connection);
    const ledger = connection.collection(BUDGET_SPEND_COLLECTION);
    const entry = (id: string) => ({
      _id: id,
      service_id: 8,
      month: MONTH,
      units: mongo.Long.fromBigInt(toUnits('1.5')),
      unpriced: false,
      applied: false,
      at: new Date(),
    });
    // Crashed after the ledger insert: nothing was added.
    await ledger.insertOne(entry('crashed-before-add') as never);
    expect(await store.count({ ...call('crashed-before-add', '1.5'), service_id: 8 })).toBe(true);
    // Crashed after the add, before settling: the mark is there.
    expect(await store.count({ ...call('crashed-after-add', '2.25'), service_id: 8 })).toBe(true);
    const other = new BudgetRepository(connection); // the first replica is gone, its settling with it
    expect(await other.count({ ...call('crashed-after-add', '2.25'), service_id: 8 })).toBe(false);
    await other.flush();
    expect(await other.spend(8, MONTH)).toEqual({ units: toUnits('3.75'), unpriced_calls: 0 });
  });

  it('entries in the collection the ledger had of its own still refuse their repeats, applied or not; swept, they are no longer read', async () => {
    const older = connection.collection(BUDGET_CALLS_COLLECTION);
    const entry = (id: string, applied: boolean) => ({
      _id: id,
      service_id: 16,
      month: MONTH,
      units: mongo.Long.fromBigInt(toUnits('2')),
      unpriced: false,
      applied,
      at: new Date(Date.now() - 10 * 86_400_000),
    });
    // Counted and settled there: the month holds its add, no mark.
    await older.insertOne(entry('older-applied', true) as never);
    await connection.collection(BUDGET_SPEND_COLLECTION).insertOne({
      _id: `16:${MONTH}`,
      service_id: 16,
      month: MONTH,
      units: mongo.Long.fromBigInt(toUnits('2')),
      unpriced_calls: 0,
    } as never);
    // Its entry written there, then a crash: not added yet.
    await older.insertOne(entry('older-unapplied', false) as never);
    const store = new BudgetRepository(connection);
    expect(await store.count({ ...call('older-applied', '2'), service_id: 16 })).toBe(false);
    expect(await store.count({ ...call('older-unapplied', '2'), service_id: 16 })).toBe(true);
    expect(await store.count({ ...call('older-unapplied', '2'), service_id: 16 })).toBe(false);
    expect(await store.count({ ...call('newer', '2'), service_id: 16 })).toBe(true);
    await store.flush();
    expect(await store.spend(16, MONTH)).toEqual({ units: toUnits('6'), unpriced_calls: 0 });
    await store.sweepLedger(new Date(Date.now() - 7 * 86_400_000));
    expect(await older.countDocuments({ service_id: 16 })).toBe(0);
  });

  it('the ledger is swept after the retention: every entry written before the cutoff goes, in slices; newer ones still refuse a repeat', async () => {
    const store = new BudgetRepository(connection);
    await store.ensureIndexes();
    const ledger = connection.collection(BUDGET_SPEND_COLLECTION);
    const old = new Date(Date.now() - 10 * 86_400_000);
    await ledger.insertMany(
      Array.from({ length: 2_500 }, (_, i) => ({
        _id: `old-${i}-CONFIG-1`,
        service_id: 11,
        month: '2026-10',
        units: mongo.Long.fromBigInt(toUnits('0.1')),
        unpriced: false,
        applied: true,
        at: new Date(old.getTime() + i),
      })) as never[],
    );
    const recent = ['recent-1-CONFIG-1', 'recent-2-CONFIG-1', 'recent-3-CONFIG-1'];
    for (const id of recent) expect(await store.count({ ...call(id, '0.5'), service_id: 11 })).toBe(true);
    await store.flush();

    const cutoff = new Date(Date.now() - 7 * 86_400_000);
    expect(await store.sweepLedger(cutoff, 1_000)).toBe(2_500);
    expect(await ledger.countDocuments({ service_id: 11, at: { $exists: true } })).toBe(3);
    expect(await store.sweepLedger(cutoff, 1_000)).toBe(0);
    // What is kept still makes counting idempotent, and the spend is what was counted.
    expect(await store.count({ ...call(recent[0]!, '0.5'), service_id: 11 })).toBe(false);
    expect(await store.spend(11, MONTH)).toEqual({ units: toUnits('1.5'), unpriced_calls: 0 });
  });
});

/** A pause a test opens: `reached` once a call it applies to (by its options) is waiting. */
function paused(
  appliesTo: (options: { projection?: Record<string, unknown> } | undefined) => boolean = () => true,
) {
  let open!: () => void;
  let reach!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const reached = new Promise<void>((resolve) => (reach = resolve));
  let done = false;
  return {
    reached,
    open,
    /** Waits at the gate the first time a call it applies to comes. */
    async wait(options: { projection?: Record<string, unknown> } | undefined) {
      if (done || !appliesTo(options)) return;
      done = true;
      reach();
      await gate;
    },
  };
}

/** The connection as a slow replica sees it: `method` of collection `name` waits at the pause. */
function slowed(
  connection: mongoose.Connection,
  name: string,
  method: string,
  pause: ReturnType<typeof paused>,
): mongoose.Connection {
  return new Proxy(connection, {
    get(target, property, receiver) {
      if (property !== 'collection') return Reflect.get(target, property, receiver);
      return (collectionName: string) => {
        const collection = target.collection(collectionName);
        if (collectionName !== name) return collection;
        return new Proxy(collection, {
          get(inner, key) {
            const value = Reflect.get(inner, key) as unknown;
            if (typeof value !== 'function') return value;
            const call = (...args: unknown[]) => (value as (...a: unknown[]) => unknown).apply(inner, args);
            if (key !== method) return call;
            return async (...args: unknown[]) => {
              await pause.wait(args[1] as never);
              return call(...args);
            };
          },
        });
      };
    },
  });
}

/**
 * The connection as a replica sees it whose count command runs its ledger entries' statements,
 * then waits at the pause, then its month's statement: as the server may run another count
 * between a command's statements. The first bulk write of the months' collection only.
 */
function splitCommand(
  connection: mongoose.Connection,
  pause: ReturnType<typeof paused>,
): mongoose.Connection {
  let done = false;
  return new Proxy(connection, {
    get(target, property, receiver) {
      if (property !== 'collection') return Reflect.get(target, property, receiver);
      return (collectionName: string) => {
        const collection = target.collection(collectionName);
        if (collectionName !== BUDGET_SPEND_COLLECTION) return collection;
        return new Proxy(collection, {
          get(inner, key) {
            const value = Reflect.get(inner, key) as unknown;
            if (typeof value !== 'function') return value;
            if (key !== 'bulkWrite' || done) return (value as (...a: unknown[]) => unknown).bind(inner);
            return async (operations: mongo.AnyBulkWriteOperation[], options: mongo.BulkWriteOptions) => {
              done = true;
              await inner.bulkWrite(operations.slice(0, -1), options);
              await pause.wait(undefined);
              return inner.bulkWrite(operations.slice(-1), options);
            };
          },
        });
      };
    },
  });
}
