/** Pipelines: the Service Items, and the latest pipeline of one, refreshed while it runs. */
import { api, ok, PAGE_SIZE } from '../api/client';
import { ErrorNotice, Link, LoadState, Loading, Pager, dateTime } from '../components/ui';
import { useInterval, useLoad, usePaged } from '../components/use-load';
import { PipelineActions } from './pipeline-actions';
import { formatCost } from './dashboard-format';
import { StageCard } from './stage-card';

export function PipelinesPage({ path }: { path: string }) {
  const id = path.split('/')[2];
  return id && /^\d+$/.test(id) ? <ItemPipeline item={Number(id)} /> : <ItemList />;
}

function ItemList() {
  const items = usePaged(
    (page) =>
      ok(
        api.GET('/v1/catalog/service_items/', {
          params: { query: { ...page } },
        }),
      ),
    { limit: PAGE_SIZE },
  );
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Pipelines</h1>
      <p class="muted">Each Service Item has a pipeline once a declaration of it is approved.</p>
      <LoadState loaded={items} what="Service Items" />
      {items.data && (
        <>
          <div class="table-scroll">
            <table>
              <caption>Service Items</caption>
              <thead>
                <tr>
                  <th scope="col">Item</th>
                  <th scope="col">Service</th>
                  <th scope="col">Consumer</th>
                  <th scope="col">Approved</th>
                </tr>
              </thead>
              <tbody>
                {items.data.results.map((item) => (
                  <tr key={item.id}>
                    <th scope="row">
                      <Link href={`/pipelines/${item.id}`}>Service Item #{item.id}</Link>
                    </th>
                    <td>{item.service.name}</td>
                    <td>{item.consumer.name}</td>
                    <td>{dateTime(item.latest_approved_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager
            label="Service Items"
            offset={items.offset}
            limit={PAGE_SIZE}
            count={items.data.count}
            onPage={items.setOffset}
          />
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
      <h1 id="page-title">Pipeline of Service Item #{item}</h1>
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
      <PipelineActions item={item} onChange={() => void pipeline.reload()} />
    </section>
  );
}
