/** Webhooks: the list, a new one (short or full form), and one with its trigger and responses. */
import { api, ok, PAGE_SIZE } from '../api/client';
import { Link, LoadState, Pager } from '../components/ui';
import { serviceName } from '../components/names';
import { usePaged } from '../components/use-load';
import { WebhookDetail } from './webhook-detail';
import { WebhookForm } from './webhook-form';
import { Enabled, FailureRun, LastDelivery } from './webhook-health';

export function WebhooksPage({ path }: { path: string }) {
  const id = path.split('/')[2];
  if (id === 'new') return <WebhookForm />;
  if (id && /^\d+$/.test(id)) return <WebhookDetail id={Number(id)} />;
  return <WebhookList />;
}

function WebhookList() {
  const hooks = usePaged(
    (page) =>
      ok(
        api.GET('/v1/external/serviceowner/webhooks/', {
          params: { query: { ...page } },
        }),
      ),
    { limit: PAGE_SIZE },
  );
  return (
    <section aria-labelledby="page-title">
      <div class="page-head">
        <h1 id="page-title">Webhooks</h1>
        <Link href="/webhooks/new" class="button primary">
          New webhook
        </Link>
      </div>
      <LoadState loaded={hooks} what="webhooks" />
      {hooks.data && (
        <>
          <div class="table-scroll">
            <table>
              <caption class="visually-hidden">Webhooks</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Service</th>
                  <th scope="col">Target</th>
                  <th scope="col">Fires on</th>
                  <th scope="col">Last delivery</th>
                  <th scope="col">Failures</th>
                  <th scope="col">State</th>
                </tr>
              </thead>
              <tbody>
                {hooks.data.results.map((hook) => (
                  <tr key={hook.id} data-webhook={hook.id}>
                    <th scope="row">
                      <Link href={`/webhooks/${hook.id}`}>{hook.name}</Link>
                    </th>
                    <td>{serviceName({ id: hook.service, name: hook.service_name })}</td>
                    <td class="break">{hook.target_url}</td>
                    <td>{hook.change_instance_state ?? 'submission'}</td>
                    <td data-health="last">
                      <LastDelivery hook={hook} />
                    </td>
                    <td data-health="failures">
                      <FailureRun hook={hook} />
                    </td>
                    <td data-health="enabled">
                      <Enabled hook={hook} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager label="Webhooks" keys={hooks.keys} count={hooks.data.count} next={hooks.data.next} />
        </>
      )}
    </section>
  );
}
