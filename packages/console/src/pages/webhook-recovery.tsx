/** "Recover since" on a webhook: resend every FAILED fire since a time, with progress. */
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import type { WebhookRecovery } from '../api/types';
import { ErrorNotice, Field, Notice } from '../components/ui';
import { useInterval } from '../components/use-load';

/** A `datetime-local` value (local time, minutes) one hour ago. */
function hourAgo(): string {
  const at = new Date(Date.now() - 3_600_000);
  at.setMinutes(at.getMinutes() - at.getTimezoneOffset());
  return at.toISOString().slice(0, 16);
}

export function WebhookRecoveryForm({ id, onProgress }: { id: number; onProgress: () => void }) {
  const [since, setSince] = useState(hourAgo);
  const [recovery, setRecovery] = useState<WebhookRecovery | null>(null);
  const [error, setError] = useState<unknown>(null);
  const path = { id };

  const refresh = async () => {
    if (!recovery) return;
    try {
      const now = await ok(
        api.GET('/v1/external/serviceowner/webhooks/{id}/recoveries/{recovery_id}/', {
          params: { path: { id, recovery_id: recovery.id } },
        }),
      );
      setRecovery(now);
      onProgress();
    } catch (failure) {
      setError(failure);
    }
  };
  useInterval(() => void refresh(), recovery?.state === 'RUNNING' ? 2 : null);

  const recover = async () => {
    setError(null);
    try {
      const started = await ok(
        api.POST('/v1/external/serviceowner/webhooks/{id}/recover/', {
          params: { path },
          body: { since: new Date(since).toISOString() },
        }),
      );
      setRecovery(started);
      onProgress();
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <form
      class="inline-form"
      aria-label="Recover FAILED fires"
      onSubmit={(event) => {
        event.preventDefault();
        void recover();
      }}
    >
      <Field
        label="Recover since (local time)"
        name="since"
        error={error}
        hint="Resends every FAILED fire since then, oldest first, within the rate limit"
      >
        {(props) => (
          <input
            {...props}
            type="datetime-local"
            value={since}
            required
            onChange={(event) => setSince(event.currentTarget.value)}
          />
        )}
      </Field>
      <button type="submit">Recover since</button>
      <ErrorNotice error={error} />
      {recovery && (
        <Notice tone={recovery.state === 'CANCELLED' ? 'warning' : 'success'}>
          {`Recovery ${recovery.state.toLowerCase()}: ${recovery.resent} of ${recovery.total} resent`}
          {recovery.reason ? ` (${recovery.reason})` : ''}
        </Notice>
      )}
    </form>
  );
}
