import { BoundedCache, DEFAULT_MAX_ENTRIES } from '@pack/cache';
import type { BudgetView, Principal } from '@pack/contracts';
import { ConflictError, ForbiddenError, NotFoundError } from '@pack/errors';
import type { GenerateResult } from '../records/pipeline-records';
import type { DirectoryStore } from '../records/store';
import type { BudgetStore } from './store';
import { fromUnits, monthOf, toUnits } from './units';

/** How long a Service read without a limit is taken to have none (Budgets.noLimitUntil). */
export const NO_LIMIT_KEPT_MS = 1_000;
const NO_LIMIT_KEPT_MAX = 10_000;

/** The reason an automatic start records as the stage's error (DESIGN: FAILED with `budget_exhausted`). */
export const BUDGET_EXHAUSTED = 'budget_exhausted';

export interface BudgetGate {
  /** Null while the Service may start AI work; else why not (starts with `budget_exhausted`). */
  exhausted(serviceId: number): Promise<string | null>;
}

/** The 409 of a trigger or retrigger while the Service's budget is spent (`reason`: BudgetGate's). */
export function budgetSpent(serviceId: number, what: string, reason: string): ConflictError {
  return new ConflictError(`${what} would start AI work: ${reason}`, {
    errors: { monthly_limit: [`the AI budget of Service ${serviceId} is spent for this month`] },
  });
}

/**
 * AI budgets per Service (docs/decisions/0046): a monthly limit set by an
 * administrator, the month's spend counted from every generate result of the Service's
 * processors, and the gate every new AI work asks. Limit and spend are read from the database on
 * every decision, so a raised limit or a new month applies on every replica at once.
 */
export class Budgets implements BudgetGate {
  /** A processor's Service never changes: kept once read (the most recently used 10,000). */
  private readonly serviceOfProcessor = new BoundedCache<number, number>({
    maxEntries: DEFAULT_MAX_ENTRIES,
    ttlMs: Infinity,
  });
  /**
   * Services read without a limit, until when (ms): most have none, and a stage start then reads
   * nothing. A limit is never kept: raising or removing one applies at once on every replica; a
   * new limit where there was none, on the other replicas within NO_LIMIT_KEPT_MS.
   */
  private readonly noLimitUntil = new Map<number, number>();
  /**
   * This replica's counts under way: a result is counted beside its stage's move, not before it,
   * and a gate that reads the spend waits for them first, so the next stage's start still sees
   * the call's cost (0046); a Service without a limit waits for nothing.
   */
  private readonly counting = new Set<Promise<unknown>>();

  constructor(
    private readonly deps: {
      store: BudgetStore;
      directory: Pick<DirectoryStore, 'service'>;
      processorService(processorId: number): Promise<number | null>;
      currency(): string;
      now?: () => Date;
    },
  ) {}

  private now(): Date {
    return this.deps.now?.() ?? new Date();
  }

  async get(principal: Principal, serviceId: number): Promise<BudgetView> {
    await this.visible(principal, serviceId);
    return this.view(serviceId);
  }

  async put(principal: Principal, serviceId: number, limit: string | null): Promise<BudgetView> {
    await this.visible(principal, serviceId);
    await this.deps.store.setLimit(serviceId, limit);
    this.noLimitUntil.delete(serviceId);
    return this.view(serviceId);
  }

  async exhausted(serviceId: number): Promise<string | null> {
    const now = this.now();
    if ((this.noLimitUntil.get(serviceId) ?? 0) > now.getTime()) return null;
    const limit = await this.deps.store.limit(serviceId);
    if (limit === null) {
      if (this.noLimitUntil.size >= NO_LIMIT_KEPT_MAX) this.noLimitUntil.clear();
      this.noLimitUntil.set(serviceId, now.getTime() + NO_LIMIT_KEPT_MS);
      return null;
    }
    if (this.counting.size > 0) await Promise.allSettled([...this.counting]);
    const month = monthOf(now);
    const spend = await this.deps.store.spend(serviceId, month);
    if (spend.units < toUnits(limit)) return null;
    return (
      `${BUDGET_EXHAUSTED}: the Service's AI budget of ${limit} ${this.deps.currency()} for ${month} is spent ` +
      `(${fromUnits(spend.units)}); an administrator can raise monthly_limit at /v1/ai/services/${serviceId}/budget/`
    );
  }

  /**
   * Counts a generate result's cost (every priced call made for it, fallbacks included) and an
   * unpriced call, for the Service of its processor; once per request id. Known to the gate from
   * the moment it is called until it ends, so it may run beside the result's own handling.
   */
  count(result: GenerateResult): Promise<void> {
    const counted = this.countOnce(result);
    this.counting.add(counted);
    void counted.then(
      () => this.counting.delete(counted),
      () => this.counting.delete(counted),
    );
    return counted;
  }

  private async countOnce(result: GenerateResult): Promise<void> {
    const units = result.cost === null ? 0n : toUnits(result.cost);
    const unpriced = result.unpriced && result.usage !== null;
    if ((units === 0n && !unpriced) || result.processor_id === null) return;
    const serviceId = await this.serviceOf(result.processor_id);
    if (serviceId === null) return;
    const month = monthOf(this.now());
    await this.deps.store.count({
      request_id: result.request_id,
      service_id: serviceId,
      month,
      units,
      unpriced,
    });
  }

  /** Used ratio (spend / limit) of every Service with a limit this month. */
  async ratios(): Promise<{ service_id: number; ratio: number }[]> {
    const rows = await this.deps.store.limited(monthOf(this.now()));
    return rows.map(({ service_id, limit, spend }) => {
      const limitUnits = toUnits(limit);
      // Exact to 1e-6 of the limit, then a float for Prometheus.
      const ratio = limitUnits === 0n ? 1 : Number((spend.units * 1_000_000n) / limitUnits) / 1_000_000;
      return { service_id, ratio };
    });
  }

  private async serviceOf(processorId: number): Promise<number | null> {
    const known = this.serviceOfProcessor.get(processorId);
    if (known !== undefined) return known;
    const serviceId = await this.deps.processorService(processorId);
    if (serviceId !== null) this.serviceOfProcessor.set(processorId, serviceId);
    return serviceId;
  }

  private async view(serviceId: number): Promise<BudgetView> {
    const month = monthOf(this.now());
    const [limit, spend] = await Promise.all([
      this.deps.store.limit(serviceId),
      this.deps.store.spend(serviceId, month),
    ]);
    return {
      service_id: serviceId,
      monthly_limit: limit,
      spent_this_month: fromUnits(spend.units),
      unpriced_calls_this_month: spend.unpriced_calls,
      month,
      currency: this.deps.currency(),
      exhausted: limit !== null && spend.units >= toUnits(limit),
    };
  }

  /** 404 for a Service that does not exist; 403 for a service owner who does not own it. */
  private async visible(principal: Principal, serviceId: number): Promise<void> {
    const service = await this.deps.directory.service(serviceId);
    if (!service) throw new NotFoundError(`No Service ${serviceId}`);
    if (principal.role !== 'admin' && service.owner_id !== principal.id)
      throw new ForbiddenError(`Service ${serviceId} is not one of your Services`);
  }
}
