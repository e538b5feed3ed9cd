import mongoose from 'mongoose';
import { uniqueName } from '@pack/testkit';
import { BudgetRepository } from '../src/data/budget-repository';
import { Budgets } from '../src/domain/budgets/budgets';

/**
 * The month boundary on the real database (docs/decisions/0046): budgets are per
 * calendar month (UTC), and "a new month lets work start again without a restart, on every replica".
 */
describe('AI budgets across the turn of a month (UTC)', () => {
  let connection: mongoose.Connection;
  let clock = new Date('2026-11-30T23:59:00.000Z');
  const SERVICE = 41;
  const replica = () =>
    new Budgets({
      store: new BudgetRepository(connection),
      directory: { service: async (id: number) => ({ id, owner_id: 1 }) as never },
      processorService: async () => SERVICE,
      currency: () => 'EUR',
      now: () => clock,
    });
  const result = (request_id: string, cost: string) =>
    ({
      request_id,
      cost,
      unpriced: false,
      usage: { input_tokens: 10, output_tokens: 5 },
      processor_id: 3,
    }) as never;
  const admin = { id: 1, role: 'admin' } as never;

  beforeAll(async () => {
    connection = await mongoose
      .createConnection(process.env.MONGO_URL!, { dbName: uniqueName('orchestrator_budget_month') })
      .asPromise();
  });
  afterAll(async () => {
    await connection.dropDatabase();
    await connection.close();
  });

  it('"Raising the limit or a new month lets work start again without a restart, on every replica"', async () => {
    const [a, b] = [replica(), replica()];
    await a.put(admin, SERVICE, '1.00');
    await a.count(result('pipeline-1-CONFIG-1', '0.60'));
    await b.count(result('pipeline-1-VERIFY-1', '0.40'));
    // Spent on the 30th at 23:59: no replica starts new AI work, and the reason names the month.
    for (const each of [a, b])
      expect(await each.exhausted(SERVICE)).toMatch(/^budget_exhausted: .* for 2026-11 is spent \(1\.0+\)/);
    expect(await b.get(admin, SERVICE)).toMatchObject({
      month: '2026-11',
      spent_this_month: '1.000000',
      exhausted: true,
    });

    // Midnight UTC: the same processes, nothing restarted, start work again.
    clock = new Date('2026-12-01T00:00:01.000Z');
    for (const each of [a, b]) expect(await each.exhausted(SERVICE)).toBeNull();
    // A result of November's call counted after midnight counts in December (the month first counted).
    await a.count(result('pipeline-1-EXECUTION-1', '0.25'));
    expect(await b.get(admin, SERVICE)).toMatchObject({
      month: '2026-12',
      monthly_limit: '1.00',
      spent_this_month: '0.250000',
      exhausted: false,
    });
    // November's spend is kept as it was.
    expect((await new BudgetRepository(connection).spend(SERVICE, '2026-11')).units).toBe(1_000_000_000_000n);
  });

  it('0046 "Results are counted before the result is acted on, so the next stage\'s start already sees this call\'s cost": counted beside the move, the gate waits for the count under way', async () => {
    clock = new Date('2026-10-15T12:00:00.000Z');
    const store = new BudgetRepository(connection);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // The count's write is held back: a gate that did not wait would read October's spend as 0.
    const slow = Object.assign(Object.create(store) as BudgetRepository, {
      count: async (call: Parameters<BudgetRepository['count']>[0]) => {
        await held;
        return store.count(call);
      },
    });
    const budgets = new Budgets({
      store: slow,
      directory: { service: async (id: number) => ({ id, owner_id: 1 }) as never },
      processorService: async () => SERVICE + 1,
      currency: () => 'EUR',
      now: () => clock,
    });
    await budgets.put(admin, SERVICE + 1, '0.50');
    const counting = budgets.count(result('pipeline-2-CONFIG-1', '0.50'));
    const gate = budgets.exhausted(SERVICE + 1);
    let answered = false;
    void gate.then(() => (answered = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(answered).toBe(false);
    release();
    await counting;
    expect(await gate).toMatch(/^budget_exhausted: .* for 2026-10 is spent \(0\.50+\)/);
  });
});
