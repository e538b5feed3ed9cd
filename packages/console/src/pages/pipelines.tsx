/** Pipelines: the latest pipeline of each Service Item, and the latest pipeline of one, refreshed while it runs. */
import { useState } from 'preact/hooks';
import { api, ok, PAGE_SIZE } from '../api/client';
import { ErrorNotice, Link, LoadState, Loading, Pager, dateTime } from '../components/ui';
import { itemName, serviceName } from '../components/names';
import { useInterval, useLoad, usePaged } from '../components/use-load';
import { PipelineActions } from './pipeline-actions';
import { RunHistory } from './run-history';
import { formatCost } from './dashboard-format';
import { STATE_TEXT, StageCard } from './stage-card';

export function PipelinesPage({ path }: { path: string }) {
  const id = path.split('/')[2];
  return id && /^\d+$/.test(id) ? <ItemPipeline item={Number(id)} /> : <ItemList />;
}

/** The list's status filter: where each item's latest run is (docs/decisions/0042). */
const STATUSES = [
  ['', 'Any status'],
  ['failed', 'Failed (a stage failed last)'],
  ['running', 'Running'],
  ['waiting', 'Waiting (CONFIG or VERIFY done, next not started)'],
  ['done', 'Done (EXECUTION OK)'],
] as const;
type Status = Exclude<(typeof STATUSES)[number][0], ''>;

function StageState({ state }: { state: string | null }) {
  const shown = state ?? 'not run';
  return <span class={`state state-${shown.toLowerCase()}`}>{STATE_TEXT[shown] ?? 'Not run'}</span>;
}

function ItemList() {
  const [status, setStatus] = useState<Status | ''>('');
  const items = usePaged(
    (page) =>
      ok(
        api.GET('/v1/external/serviceowner/pack/pipelines/', {
          params: { query: { ...page, ...(status ? { status } : {}) } },
        }),
      ),
    { limit: PAGE_SIZE, deps: [status] },
  );
  // Live like a pipeline: another person or a result may move a stage.
  useInterval(() => void items.reload(), 10);
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Pipelines</h1>
      <p class="muted">
        The latest pipeline of each Service Item, newest first. An item has one once a declaration of it is
        approved.
      </p>
      <div class="filters">
        <label>
          Status{' '}
          <select
            value={status}
            onChange={(event) => {
              setStatus((event.target as HTMLSelectElement).value as Status | '');
            }}
          >
            {STATUSES.map(([value, text]) => (
              <option key={value} value={value}>
                {text}
              </option>
            ))}
          </select>
        </label>
      </div>
      <LoadState loaded={items} what="pipelines" />
      {items.data && (
        <>
          <div class="table-scroll">
            <table data-testid="pipelines">
              <caption>Latest pipelines</caption>
              <thead>
                <tr>
                  <th scope="col">Item</th>
                  <th scope="col">Service</th>
                  <th scope="col">Run</th>
                  <th scope="col">CONFIG</th>
                  <th scope="col">VERIFY</th>
                  <th scope="col">EXECUTION</th>
                  <th scope="col">Total cost</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {items.data.results.map((row) => (
                  <tr key={row.id} data-item={row.service_item} data-status={row.status}>
                    <th scope="row">
                      <Link href={`/pipelines/${row.service_item}`}>
                        {itemName(row.service, row.service_item)}
                      </Link>
                    </th>
                    <td>{serviceName(row.service)}</td>
                    <td>{row.run}</td>
                    {row.stages.map((stage) => (
                      <td key={stage.stage} data-stage={stage.stage} title={stage.error ?? undefined}>
                        <StageState state={stage.state} />
                      </td>
                    ))}
                    <td>{row.total_cost === null ? 'hidden' : formatCost(row.total_cost, row.currency)}</td>
                    <td>{dateTime(row.updated_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {items.data.results.length === 0 && <p class="muted">No pipelines with this status.</p>}
          <Pager label="pipelines" keys={items.keys} count={items.data.count} next={items.data.next} />
        </>
      )}
    </section>
  );
}

const RUNNING = new Set(['SCHEDULED', 'WAITING_FOR_RESPONSE']);

function ItemPipeline({ item }: { item: number }) {
  const pipeline = useLoad(
    () =>
      ok(
        api.GET('/v1/external/serviceowner/pack/pipelines/latest/service_item/{id}/', {
          params: { path: { id: item } },
        }),
      ),
    [item],
  );
  const running =
    pipeline.data?.stages.some((stage) => stage.state !== null && RUNNING.has(stage.state)) ?? false;
  // Live: every 2 s while a stage runs, every 10 s otherwise (another person may start one).
  useInterval(() => void pipeline.reload(), running ? 2 : 10);
  const notFound = (pipeline.error as { status?: number } | null)?.status === 404;
  return (
    <section aria-labelledby="page-title">
      <p>
        <Link href="/pipelines">← Pipelines</Link>
      </p>
      <h1 id="page-title">
        Pipeline of {pipeline.data ? itemName(pipeline.data.service, item) : `item ${item}`}
      </h1>
      {notFound ? (
        <p>No pipeline yet: the item has no approved declaration, or no stage has run.</p>
      ) : (
        <ErrorNotice error={pipeline.error} />
      )}
      {pipeline.loading && !pipeline.data && <Loading what="the pipeline" />}
      {pipeline.data && (
        <>
          <p class="muted" aria-live="polite">
            Pipeline #{pipeline.data.id}, run {pipeline.data.run} · total cost{' '}
            {pipeline.data.total_cost === null
              ? 'hidden'
              : formatCost(pipeline.data.total_cost, pipeline.data.currency)}
            {pipeline.data.total_cost_covers === 'priced_calls_only'
              ? ` (priced calls only; ${pipeline.data.unpriced_calls ?? 0} unpriced)`
              : ''}{' '}
            · updated {dateTime(pipeline.data.updated_at)}
            {running ? ' · running, refreshing every 2 s' : ''}
          </p>
          <ol class="stages">
            {pipeline.data.stages.map((stage) => (
              <li key={stage.stage}>
                <StageCard stage={stage} currency={pipeline.data!.currency} />
              </li>
            ))}
          </ol>
        </>
      )}
      {pipeline.data && <RunHistory item={item} version={pipeline.data.updated_at} />}
      <PipelineActions item={item} onChange={() => void pipeline.reload()} />
    </section>
  );
}
