/**
 * Change Instances: the states the role's default filter (GUI Table Settings) picks, and a table
 * that refreshes itself every `table_refresh_interval` seconds while auto-refresh is on.
 */
import { useState } from 'preact/hooks';
import { api, okWithHeaders, PAGE_SIZE } from '../api/client';
import { CHANGE_INSTANCE_STATES, type ChangeInstance, type ChangeInstanceState } from '../api/types';
import { Check, ErrorNotice, Link, Loading, Pager, dateTime } from '../components/ui';
import { itemName } from '../components/names';
import { useInterval, useLoad, usePageKeys } from '../components/use-load';
import { session } from '../session';
import { useSettings } from '../settings-store';

export function ChangeInstancesPage() {
  const { settings } = useSettings();
  // null: not chosen yet, so the API applies the role's default filter and says which it was.
  const [states, setStates] = useState<ChangeInstanceState[] | null>(null);
  const keys = usePageKeys(PAGE_SIZE, [JSON.stringify(states)]);
  const [refreshedAt, setRefreshedAt] = useState<Date | null>(null);
  const list = useLoad(async () => {
    const state = states === null ? undefined : states.length === 0 ? ('ALL' as const) : states;
    const answer = await okWithHeaders(
      api.GET('/v1/catalog/change_instances/', {
        params: { query: { ...keys.query, ...(state ? { state } : {}) } },
      }),
    );
    setRefreshedAt(new Date());
    const applied = answer.headers.get('x-state-filter');
    return {
      page: answer.data,
      applied: applied === 'ALL' || !applied ? [] : (applied.split(',') as ChangeInstanceState[]),
    };
  }, [JSON.stringify(states), keys.after]);
  const table = settings?.gui_table;
  const interval = table?.ENABLED ? table.table_refresh_interval : null;
  useInterval(() => void list.reload(), interval);

  const shown = states ?? list.data?.applied ?? [];
  const toggle = (state: ChangeInstanceState, on: boolean) => {
    setStates(on ? [...shown, state] : shown.filter((entry) => entry !== state));
  };
  const owner = session.me()?.role !== 'consumer';
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Change Instances</h1>
      <fieldset class="filters">
        <legend>States shown (none checked: all)</legend>
        {CHANGE_INSTANCE_STATES.map((state) => (
          <Check
            key={state}
            label={state}
            checked={shown.includes(state)}
            onChange={(on) => toggle(state, on)}
          />
        ))}
      </fieldset>
      <p class="muted" data-testid="refresh-status">
        {interval ? `Refreshes every ${interval} s.` : 'Auto-refresh is off (GUI Table Settings).'}
        {refreshedAt && ` Last refreshed ${refreshedAt.toLocaleTimeString()}.`}
      </p>
      <ErrorNotice error={list.error} shownFields={[]} />
      {list.loading && !list.data && <Loading what="Change Instances" />}
      {list.data && (
        <>
          <div class="table-scroll">
            <table data-testid="change-instances">
              <caption class="visually-hidden">Change Instances</caption>
              <thead>
                <tr>
                  <th scope="col">Id</th>
                  <th scope="col">Service</th>
                  <th scope="col">Consumer</th>
                  <th scope="col">State</th>
                  <th scope="col">Created</th>
                  <th scope="col">Updated</th>
                  {owner && <th scope="col">Validator</th>}
                  {owner && <th scope="col">Pipeline</th>}
                </tr>
              </thead>
              <tbody>
                {list.data.page.results.map((instance) => (
                  <tr key={instance.id} data-id={instance.id}>
                    <th scope="row">#{instance.id}</th>
                    <td>{instance.service.name}</td>
                    <td>{instance.consumer.name}</td>
                    <td>
                      <span class={`state state-${instance.state.toLowerCase()}`}>{instance.state}</span>
                    </td>
                    <td>{dateTime(instance.created_at)}</td>
                    <td>{dateTime(instance.updated_at)}</td>
                    {owner && <td data-validation>{validationText(instance.validation)}</td>}
                    {owner && (
                      <td>
                        <Link href={`/pipelines/${instance.service_item}`}>
                          {itemName(instance.service, instance.service_item)}
                        </Link>
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {list.data.page.results.length === 0 && <p class="muted">No Change Instances in these states.</p>}
          <Pager
            label="Change Instances"
            keys={keys}
            count={list.data.page.count}
            next={list.data.page.next}
          />
        </>
      )}
    </section>
  );
}

/** What the Change Instance Validator made of the instance: its decision, or none and why (0056). */
function validationText(validation: ChangeInstance['validation']): string {
  if (!validation) return '—';
  if (validation.decision !== null) return validation.decision === 'approve' ? 'approved' : 'rejected';
  return `no decision: ${validation.reason ?? 'no reason given'}`;
}
