/** One webhook: its settings, a manual trigger, recovery, and its responses (state, status code, body, resend). */
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { ErrorNotice, Link, Loading, Notice, Pager, dateTime } from '../components/ui';
import { useInterval, useLoad, usePageKeys } from '../components/use-load';
import { WebhookRecoveryForm } from './webhook-recovery';

const PAGE = 10;

export function WebhookDetail({ id }: { id: number }) {
  const path = { id };
  const hook = useLoad(
    () => ok(api.GET('/v1/external/serviceowner/webhooks/{id}/', { params: { path } })),
    [id],
  );
  const keys = usePageKeys(PAGE, [id]);
  const responses = useLoad(
    () =>
      ok(
        api.GET('/v1/external/serviceowner/webhooks/{id}/responses/', {
          params: { path, query: keys.query },
        }),
      ),
    [id, keys.after],
  );
  const [triggered, setTriggered] = useState('');
  const [error, setError] = useState<unknown>(null);
  const pending = responses.data?.results.some(
    (entry) => entry.state === 'SCHEDULED' || entry.state === 'WAITING_FOR_RESPONSE',
  );
  useInterval(() => void responses.reload(), pending ? 2 : null);

  const trigger = async () => {
    setError(null);
    setTriggered('');
    try {
      const outcome = await ok(
        api.POST('/v1/external/serviceowner/webhooks/{id}/trigger/', { params: { path }, body: {} }),
      );
      setTriggered(`Trigger ${outcome.outcome}.`);
      await responses.reload();
    } catch (failure) {
      setError(failure);
    }
  };

  const resend = async (response: number) => {
    setError(null);
    setTriggered('');
    try {
      const outcome = await ok(
        api.POST('/v1/external/serviceowner/webhooks/{id}/responses/{response_id}/resend/', {
          params: { path: { id, response_id: response } },
        }),
      );
      setTriggered(`Response ${response} resent as response ${outcome.response_id}.`);
      await responses.reload();
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <section aria-labelledby="page-title">
      <p>
        <Link href="/webhooks">← Webhooks</Link>
      </p>
      <ErrorNotice error={hook.error} />
      {hook.loading && !hook.data && <Loading what="the webhook" />}
      {hook.data && (
        <>
          <h1 id="page-title">Webhook {hook.data.name}</h1>
          <dl class="pairs">
            <div>
              <dt>Target</dt>
              <dd class="break">{hook.data.target_url}</dd>
            </div>
            <div>
              <dt>Authorization</dt>
              <dd>{hook.data.authorization || '—'}</dd>
            </div>
            <div>
              <dt>Fires on</dt>
              <dd>{hook.data.change_instance_state ?? 'submission'}</dd>
            </div>
            <div>
              <dt>Wait / cooling</dt>
              <dd>
                {hook.data.trigger_wait_time} s / {hook.data.trigger_cooling_time} s
              </dd>
            </div>
            <div>
              <dt>Signing secret</dt>
              <dd>{hook.data.secret}</dd>
            </div>
          </dl>
          <button type="button" class="primary" onClick={() => void trigger()}>
            Trigger now
          </button>
          <ErrorNotice error={error} />
          {triggered && <Notice tone="success">{triggered}</Notice>}
          <WebhookRecoveryForm id={id} onProgress={() => void responses.reload()} />
        </>
      )}
      <h2>Responses</h2>
      <ErrorNotice error={responses.error} />
      {responses.data && (
        <>
          <div class="table-scroll">
            <table data-testid="webhook-responses">
              <caption class="visually-hidden">Webhook responses, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">State</th>
                  <th scope="col">Status code</th>
                  <th scope="col">Body</th>
                  <th scope="col">How</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {responses.data.results.map((entry) => (
                  <tr key={entry.id}>
                    <th scope="row">{entry.id}</th>
                    <td>
                      <span class={`state state-${entry.state.toLowerCase()}`}>{entry.state}</span>
                    </td>
                    <td>{entry.status_code ?? '—'}</td>
                    <td class="break">
                      <code>{entry.response_body ?? '—'}</code>
                      {entry.response_truncated && ' (cut)'}
                    </td>
                    <td>
                      {entry.mode}
                      {entry.resend_of && ` (resend of #${entry.resend_of.id})`}
                    </td>
                    <td>{entry.attempts.length}</td>
                    <td>{dateTime(entry.created_at)}</td>
                    <td>
                      {(entry.state === 'OK' || entry.state === 'FAILED') && (
                        <button
                          type="button"
                          aria-label={`Resend response ${entry.id}`}
                          onClick={() => void resend(entry.id)}
                        >
                          Resend
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager label="Responses" keys={keys} count={responses.data.count} next={responses.data.next} />
        </>
      )}
    </section>
  );
}
