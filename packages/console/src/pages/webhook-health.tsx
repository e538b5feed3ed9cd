/** A webhook's health as the list shows it: how its last delivery went, a run of failures, whether it is off and why. */
import type { WebhookListItem } from '../api/types';
import { dateTime } from '../components/ui';

const plural = (count: number, one: string) => `${count} ${one}${count === 1 ? '' : 's'}`;

export function LastDelivery({ hook }: { hook: WebhookListItem }) {
  const { last_state, last_at } = hook.health;
  if (last_state === null) return <span class="muted">never fired</span>;
  return (
    <>
      <span class={`state state-${last_state.toLowerCase()}`}>{last_state}</span>{' '}
      <span class="muted nowrap">{dateTime(last_at)}</span>
    </>
  );
}

export function FailureRun({ hook }: { hook: WebhookListItem }) {
  const { failures_in_row, failing_since } = hook.health;
  if (failures_in_row === 0) return <span class="muted">none</span>;
  return (
    <strong class="failing">
      {plural(failures_in_row, 'failure')} in a row since {dateTime(failing_since)}
    </strong>
  );
}

export function Enabled({ hook }: { hook: WebhookListItem }) {
  if (hook.enabled) return <>enabled</>;
  return (
    <strong class="failing">disabled: {hook.disabled_reason ?? 'turned off by its owner or an admin'}</strong>
  );
}
