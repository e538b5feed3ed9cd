/** A Service's AI budget on the AI processors page: the month's spend, the limit, an admin's edit (0046). */
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import type { AiBudget } from '../api/types';
import { ErrorNotice, Field, Notice } from '../components/ui';
import { useLoad } from '../components/use-load';
import { session } from '../session';

export function BudgetPanel({ service }: { service: number }) {
  const budget = useLoad(
    () => ok(api.GET('/v1/ai/services/{id}/budget/', { params: { path: { id: service } } })),
    [service],
  );
  const admin = session.me()?.role === 'admin';
  return (
    <section class="panel" aria-labelledby="budget-title" data-testid="ai-budget">
      <h2 id="budget-title">AI budget this month</h2>
      <ErrorNotice error={budget.error} />
      {budget.data && <BudgetFigures budget={budget.data} />}
      {budget.data && admin && (
        <BudgetForm
          key={`${service}-${budget.data.monthly_limit}`}
          budget={budget.data}
          onSaved={budget.reload}
        />
      )}
    </section>
  );
}

function BudgetFigures({ budget }: { budget: AiBudget }) {
  const { currency } = budget;
  return (
    <>
      <dl class="figures">
        <div data-figure="spent">
          <dt>Spent in {budget.month} (UTC)</dt>
          <dd>
            {budget.spent_this_month} {currency}
          </dd>
        </div>
        <div data-figure="limit">
          <dt>Monthly limit</dt>
          <dd>{budget.monthly_limit === null ? 'no limit' : `${budget.monthly_limit} ${currency}`}</dd>
        </div>
        <div data-figure="unpriced">
          <dt>Unpriced calls (not in the spend)</dt>
          <dd>{budget.unpriced_calls_this_month}</dd>
        </div>
      </dl>
      {budget.exhausted && (
        <Notice tone="warning">
          The budget is spent: no new AI work of this Service starts until next month or a higher limit.
        </Notice>
      )}
    </>
  );
}

function BudgetForm({ budget, onSaved }: { budget: AiBudget; onSaved: () => Promise<void> | void }) {
  const [limit, setLimit] = useState(budget.monthly_limit ?? '');
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const save = async (monthly_limit: string | null) => {
    setError(null);
    setSaved(false);
    try {
      await ok(
        api.PUT('/v1/ai/services/{id}/budget/', {
          params: { path: { id: budget.service_id } },
          body: { monthly_limit },
        }),
      );
      setSaved(true);
      await onSaved();
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <form
      class="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        void save(limit.trim() === '' ? null : limit.trim());
      }}
    >
      <Field
        label={`Monthly limit (${budget.currency})`}
        name="monthly_limit"
        error={error}
        hint="A decimal such as 25.00; empty: no limit"
      >
        {(props) => (
          <input
            {...props}
            inputMode="decimal"
            value={limit}
            onInput={(event) => setLimit(event.currentTarget.value)}
          />
        )}
      </Field>
      <button type="submit" class="primary">
        Save limit
      </button>
      <ErrorNotice error={error} shownFields={['monthly_limit']} />
      {saved && <Notice tone="success">Budget saved.</Notice>}
    </form>
  );
}
