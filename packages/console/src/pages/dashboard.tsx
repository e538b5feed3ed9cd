/** The AI Integration dashboard: totals, a chart over time and one per model or processor. */
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import type { Dashboard, GroupBy } from '../api/types';
import { ChartView } from '../components/chart';
import { ErrorNotice, Field, Loading } from '../components/ui';
import { useLoad } from '../components/use-load';
import { formatCosts, formatMs, groupLabel } from './dashboard-format';
import { ConnectionTests } from './dashboard-tests';

const DAY = 86_400_000;
const isoDay = (time: number) => new Date(time).toISOString().slice(0, 10);

export function DashboardPage() {
  const [from, setFrom] = useState(() => isoDay(Date.now() - 6 * DAY));
  const [to, setTo] = useState(() => isoDay(Date.now() + DAY));
  const [groupBy, setGroupBy] = useState<Exclude<GroupBy, 'day'>>('model');
  const query = (group_by: GroupBy) => ({ params: { query: { from, to, group_by } } });
  const loaded = useLoad(async () => {
    const [byGroup, byDay, names] = await Promise.all([
      ok(api.GET('/v1/ai/dashboard/', query(groupBy))),
      ok(api.GET('/v1/ai/dashboard/', query('day'))),
      groupNames(groupBy),
    ]);
    return { byGroup, byDay, names };
  }, [from, to, groupBy]);

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">AI Integration</h1>
      <form class="inline-form" onSubmit={(event) => event.preventDefault()}>
        <Field label="From (UTC day)" name="from" error={loaded.error}>
          {(props) => (
            <input
              {...props}
              type="date"
              value={from}
              onChange={(event) => setFrom(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field label="To (UTC day, exclusive)" name="to" error={loaded.error}>
          {(props) => (
            <input {...props} type="date" value={to} onChange={(event) => setTo(event.currentTarget.value)} />
          )}
        </Field>
        <Field label="Per" name="group_by" error={loaded.error}>
          {(props) => (
            <select
              {...props}
              value={groupBy}
              onChange={(event) => setGroupBy(event.currentTarget.value as 'model' | 'processor')}
            >
              <option value="model">LLM model</option>
              <option value="processor">AI processor</option>
            </select>
          )}
        </Field>
      </form>
      <ErrorNotice error={loaded.error} shownFields={['from', 'to', 'group_by']} />
      {loaded.loading && !loaded.data && <Loading what="the dashboard" />}
      {loaded.data && <Figures {...loaded.data} groupBy={groupBy} />}
    </section>
  );
}

async function groupNames(groupBy: GroupBy): Promise<Map<number, string>> {
  const list =
    groupBy === 'model'
      ? await ok(api.GET('/v1/ai/llm_models/', { params: { query: { limit: 100 } } }))
      : await ok(api.GET('/v1/ai/processors/', { params: { query: { limit: 100 } } }));
  return new Map(list.results.map((entry) => [entry.id, entry.name]));
}

function Figures({
  byGroup,
  byDay,
  names,
  groupBy,
}: {
  byGroup: Dashboard;
  byDay: Dashboard;
  names: Map<number, string>;
  groupBy: GroupBy;
}) {
  const { totals } = byGroup;
  const hidden = byGroup.costs_hidden;
  // [key, name, value, what qualifies the value]
  const figures: [string, string, string, string?][] = [
    ['calls', 'Calls', String(totals.calls)],
    ['errors', 'Errors', `${totals.errors} (${(totals.error_rate * 100).toFixed(1)}%)`],
    ['input_tokens', 'Input tokens', String(totals.input_tokens)],
    ['output_tokens', 'Output tokens', String(totals.output_tokens)],
    [
      'cost',
      'Cost',
      hidden ? 'hidden' : formatCosts(totals.costs),
      !hidden && totals.cost_covers === 'priced_calls_only'
        ? `priced calls only; ${totals.unpriced_calls} unpriced`
        : undefined,
    ],
    ['p50', 'Latency p50', formatMs(totals.p50_latency_ms)],
    ['p95', 'Latency p95', formatMs(totals.p95_latency_ms)],
  ];
  const label = (key: number | string | null) => groupLabel(groupBy, key, names);
  const per = groupBy === 'model' ? 'LLM model' : 'AI processor';
  return (
    <>
      <p class="muted">
        {new Date(byGroup.from).toUTCString()} to {new Date(byGroup.to).toUTCString()}
        {hidden
          ? ' · costs are hidden from your role by the Charges Settings'
          : byGroup.currency
            ? ` · each cost in the currency its calls were made in (now ${byGroup.currency})`
            : ' · costs in no named currency (the Currency setting is off)'}
      </p>
      <h2>Generations</h2>
      <dl class="figures" data-testid="dashboard-totals">
        {figures.map(([key, name, value, note]) => (
          <div key={key} data-figure={key}>
            <dt>{name}</dt>
            <dd>
              {value}
              {note && <span class="figure-note">{note}</span>}
            </dd>
          </div>
        ))}
      </dl>
      <div class="charts">
        <ChartView
          kind="line"
          title="Calls and errors per day"
          labels={byDay.groups.map((group) => String(group.key))}
          series={[
            { label: 'Calls', values: byDay.groups.map((group) => group.calls) },
            { label: 'Errors', values: byDay.groups.map((group) => group.errors) },
          ]}
        />
        <ChartView
          kind="bar"
          title={`Tokens per ${per}`}
          labels={byGroup.groups.map((group) => label(group.key))}
          series={[
            { label: 'Input tokens', values: byGroup.groups.map((group) => group.input_tokens) },
            { label: 'Output tokens', values: byGroup.groups.map((group) => group.output_tokens) },
          ]}
        />
        {!hidden && (
          <ChartView
            kind="bar"
            title="Cost per day"
            labels={byDay.groups.map((group) => String(group.key))}
            series={costSeries(byDay.groups)}
          />
        )}
      </div>
      <div class="table-scroll">
        <table data-testid="dashboard-groups">
          <caption>Per {per}</caption>
          <thead>
            <tr>
              <th scope="col">{per}</th>
              <th scope="col">Calls</th>
              <th scope="col">Errors</th>
              <th scope="col">Input tokens</th>
              <th scope="col">Output tokens</th>
              {!hidden && <th scope="col">Cost</th>}
              <th scope="col">p50</th>
              <th scope="col">p95</th>
            </tr>
          </thead>
          <tbody>
            {byGroup.groups.map((group) => (
              <tr key={String(group.key)}>
                <th scope="row">{label(group.key)}</th>
                <td>{group.calls}</td>
                <td>{group.errors}</td>
                <td>{group.input_tokens}</td>
                <td>{group.output_tokens}</td>
                {!hidden && <td>{formatCosts(group.costs)}</td>}
                <td>{formatMs(group.p50_latency_ms)}</td>
                <td>{formatMs(group.p95_latency_ms)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ConnectionTests
        tests={byGroup.connection_tests}
        hidden={hidden}
        perModel={groupBy === 'model'}
        label={label}
      />
    </>
  );
}

/** One series per currency: amounts in different currencies are never added. */
function costSeries(days: Dashboard['groups']) {
  const currencies = [...new Set(days.flatMap((day) => day.costs.map((cost) => cost.currency)))];
  return currencies.map((currency) => ({
    label: currency ? `Cost (${currency})` : 'Cost',
    values: days.map((day) => {
      const sum = day.costs.find((cost) => cost.currency === currency);
      return sum ? Number(sum.cost) : null;
    }),
  }));
}
