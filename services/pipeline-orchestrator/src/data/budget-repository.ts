import type { Connection } from 'mongoose';
import { LARGE_BATCH, oneBatch } from '@pack/db';
import type { BudgetStore, CountedCall, MonthSpend } from '../domain/budgets/store';
import {
  BUDGET_CALLS_COLLECTION,
  BUDGET_SPEND_COLLECTION,
  BUDGETS_COLLECTION,
  spendKey,
  spendOf,
  type BudgetDocument,
  type SpendDocument,
} from './budget-documents';
import { BudgetLedger } from './budget-ledger';

export { BUDGET_CALLS_COLLECTION, BUDGET_SPEND_COLLECTION, BUDGETS_COLLECTION };

/**
 * Limits in `ai_budgets` (one per Service), spend in `ai_budget_spend` (one per Service and UTC
 * month), counted once per request id by the ledger (budget-ledger.ts, docs/decisions/0046).
 */
export class BudgetRepository implements BudgetStore {
  private readonly budgets;
  private readonly spends;
  private readonly ledger;

  /** `lingerMs`: how long a first count waits for others to share its writes (0052). */
  constructor(connection: Connection, lingerMs = 0) {
    this.budgets = connection.collection<BudgetDocument>(BUDGETS_COLLECTION);
    this.spends = connection.collection<SpendDocument>(BUDGET_SPEND_COLLECTION);
    this.ledger = new BudgetLedger(connection, lingerMs);
  }

  ensureIndexes(): Promise<void> {
    return this.ledger.ensureIndexes();
  }

  /** Ledger entries written before `cutoff` go (budget-ledger.ts). */
  sweepLedger(cutoff: Date, size?: number): Promise<number> {
    return this.ledger.sweepLedger(cutoff, size);
  }

  count(call: CountedCall): Promise<boolean> {
    return this.ledger.count(call);
  }

  /** Settles the counted calls not settled yet (at stop). */
  flush(): Promise<void> {
    return this.ledger.flush();
  }

  async limit(serviceId: number): Promise<string | null> {
    const found = await this.budgets.findOne({ _id: serviceId });
    return found?.monthly_limit ?? null;
  }

  async setLimit(serviceId: number, limit: string | null): Promise<void> {
    await this.budgets.updateOne(
      { _id: serviceId },
      { $set: { monthly_limit: limit, updated_at: new Date() } },
      { upsert: true },
    );
  }

  async spend(serviceId: number, month: string): Promise<MonthSpend> {
    const found = await this.spends.findOne(
      { _id: spendKey(serviceId, month) },
      { promoteLongs: false, projection: { units: 1, unpriced_calls: 1 } },
    );
    return spendOf(found);
  }

  async limited(month: string): Promise<{ service_id: number; limit: string; spend: MonthSpend }[]> {
    const budgets = await this.budgets
      .find({ monthly_limit: { $ne: null } }, { batchSize: LARGE_BATCH })
      .toArray();
    if (budgets.length === 0) return [];
    const spends = await this.spends
      .find(
        { _id: { $in: budgets.map((budget) => spendKey(budget._id, month)) } },
        {
          promoteLongs: false,
          projection: { service_id: 1, units: 1, unpriced_calls: 1 },
          ...oneBatch(budgets.length),
        },
      )
      .toArray();
    const byService = new Map(spends.map((spend) => [spend.service_id, spendOf(spend)]));
    return budgets.map((budget) => ({
      service_id: budget._id,
      limit: budget.monthly_limit!,
      spend: byService.get(budget._id) ?? { units: 0n, unpriced_calls: 0 },
    }));
  }
}
