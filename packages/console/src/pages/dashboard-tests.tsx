/** The dashboard's connection tests: calls of their own kind, never in the generation figures. */
import type { Dashboard } from '../api/types';
import { formatCosts } from './dashboard-format';

export function ConnectionTests({
  tests,
  hidden,
  perModel,
  label,
}: {
  tests: Dashboard['connection_tests'];
  hidden: boolean;
  /** Rows per LLM model (the page is per model); otherwise the totals alone. */
  perModel: boolean;
  label: (key: number | string | null) => string;
}) {
  if (tests.totals.calls === 0) return null;
  const rows = perModel ? tests.groups.map((group) => [label(group.key), group] as const) : [];
  const cells = (stats: Dashboard['connection_tests']['totals']) => (
    <>
      <td>{stats.calls}</td>
      <td>{stats.errors}</td>
      <td>{stats.input_tokens}</td>
      <td>{stats.output_tokens}</td>
      {!hidden && <td>{formatCosts(stats.costs)}</td>}
    </>
  );
  return (
    <section aria-labelledby="connection-tests-title" data-testid="dashboard-connection-tests">
      <h2 id="connection-tests-title">Connection tests</h2>
      <p class="muted">
        Administrators' tests of LLM models (kind connection_test): the providers bill them, so they are
        counted here, apart from the generations above.
      </p>
      <div class="table-scroll">
        <table>
          <caption>{perModel ? 'Connection tests per LLM model' : 'Connection tests'}</caption>
          <thead>
            <tr>
              <th scope="col">LLM model</th>
              <th scope="col">Tests</th>
              <th scope="col">Failed</th>
              <th scope="col">Input tokens</th>
              <th scope="col">Output tokens</th>
              {!hidden && <th scope="col">Cost</th>}
            </tr>
          </thead>
          <tbody>
            {rows.map(([name, group]) => (
              <tr key={name}>
                <th scope="row">{name}</th>
                {cells(group)}
              </tr>
            ))}
          </tbody>
          <tfoot>
            <tr data-row="total">
              <th scope="row">All tests</th>
              {cells(tests.totals)}
            </tr>
          </tfoot>
        </table>
      </div>
    </section>
  );
}
