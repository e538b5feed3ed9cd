/** A new webhook: the short form of spec 2.6, or the full one with state and timing. */
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { CHANGE_INSTANCE_STATES, type NewWebhook, type Webhook } from '../api/types';
import { ServiceSelect, useServices } from '../components/service-picker';
import { Check, ErrorNotice, Field, Link, Notice } from '../components/ui';

const SHOWN = [
  'name',
  'description',
  'service',
  'target_url',
  'authorization',
  'change_instance_state',
  'trigger_wait_time',
  'trigger_cooling_time',
];

export function WebhookForm() {
  const services = useServices();
  const [full, setFull] = useState(false);
  const [draft, setDraft] = useState({
    name: '',
    description: '',
    target_url: '',
    authorization: '',
    state: '',
    wait: '0',
    cooling: '0',
  });
  const [service, setService] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<Webhook | null>(null);
  const set = (patch: Partial<typeof draft>) => setDraft((current) => ({ ...current, ...patch }));

  const save = async (event: Event) => {
    event.preventDefault();
    setError(null);
    const body: NewWebhook = {
      name: draft.name,
      description: draft.description,
      service: service ?? 0,
      target_url: draft.target_url,
      authorization: draft.authorization,
    };
    if (full) {
      body.change_instance_state = (draft.state || null) as NewWebhook['change_instance_state'];
      body.trigger_wait_time = Number(draft.wait);
      body.trigger_cooling_time = Number(draft.cooling);
    }
    try {
      setCreated(await ok(api.POST('/v1/external/serviceowner/webhooks/', { body })));
    } catch (failure) {
      setError(failure);
    }
  };

  if (created)
    return (
      <section aria-labelledby="page-title">
        <h1 id="page-title">Webhook {created.name} created</h1>
        <Notice tone="success">
          <p>Its signing secret is shown this once; keep it where the receiver checks signatures:</p>
          <pre class="json" tabIndex={0} aria-label="Signing secret">
            {created.secret}
          </pre>
        </Notice>
        <Link href={`/webhooks/${created.id}`} class="button primary">
          Open the webhook
        </Link>
      </section>
    );
  const text = (key: keyof typeof draft, label: string, props: Record<string, unknown> = {}) => (
    <Field
      label={label}
      name={key === 'wait' ? 'trigger_wait_time' : key === 'cooling' ? 'trigger_cooling_time' : key}
      error={error}
    >
      {(field) => (
        <input
          {...field}
          {...props}
          value={draft[key]}
          onInput={(event) => set({ [key]: event.currentTarget.value })}
        />
      )}
    </Field>
  );
  return (
    <section aria-labelledby="page-title">
      <p>
        <Link href="/webhooks">← Webhooks</Link>
      </p>
      <h1 id="page-title">New webhook</h1>
      <form class="form" onSubmit={(event) => void save(event)}>
        <Check
          label="Full form (state that fires it, wait and cooling times)"
          checked={full}
          onChange={setFull}
        />
        {text('name', 'Name', { required: true })}
        {text('description', 'Description')}
        <ServiceSelect services={services.data} value={service} onChange={setService} error={error} />
        {text('target_url', 'Target URL', { type: 'url', required: true })}
        {text('authorization', 'Authorization header value (e.g. Bearer …)', {
          type: 'password',
          autoComplete: 'off',
        })}
        {full && (
          <>
            <Field label="Fires when a Change Instance enters" name="change_instance_state" error={error}>
              {(field) => (
                <select
                  {...field}
                  value={draft.state}
                  onChange={(event) => set({ state: event.currentTarget.value })}
                >
                  <option value="">At submission (no state)</option>
                  {CHANGE_INSTANCE_STATES.map((state) => (
                    <option key={state} value={state}>
                      {state}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            {text('wait', 'Trigger wait time (seconds)', { type: 'number', min: 0, max: 86400 })}
            {text('cooling', 'Trigger cooling time (seconds)', { type: 'number', min: 0, max: 86400 })}
          </>
        )}
        <ErrorNotice error={error ?? services.error} shownFields={SHOWN} />
        <div class="actions">
          <button type="submit" class="primary">
            Create webhook
          </button>
        </div>
      </form>
    </section>
  );
}
