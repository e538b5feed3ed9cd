/** One LLM model: the fields of its provider, secrets masked, and the connection test. */
import { useEffect, useState } from 'preact/hooks';
import { MODEL_URL_RULE } from '@pack/contracts';
import { api, ok } from '../api/client';
import type { ConnectionTest, LlmModel, Provider } from '../api/types';
import { bodyOf, draftOf, EMPTY, type Draft } from './model-draft';
import { ErrorNotice, Field, Link, Loading, Notice, TypedInput } from '../components/ui';
import { navigate } from '../router';
import { session } from '../session';
import { isMasked, PROVIDER_FIELDS, PROVIDER_LABELS, PROVIDERS } from './providers';

export function ModelForm({ id }: { id?: number }) {
  const [stored, setStored] = useState<LlmModel | null>(null);
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState('');
  const [busy, setBusy] = useState(false);
  const [test, setTest] = useState<{ result?: ConnectionTest; error?: unknown } | null>(null);
  const admin = session.me()?.role === 'admin';

  useEffect(() => {
    if (id === undefined) return;
    ok(api.GET('/v1/ai/llm_models/{id}/', { params: { path: { id } } }))
      .then((model) => {
        setStored(model);
        setDraft(draftOf(model));
      })
      .catch(setError);
  }, [id]);

  const set = (patch: Partial<Draft>) => setDraft((current) => ({ ...current, ...patch }));
  const setExtra = (key: string, value: string | boolean) =>
    setDraft((current) => ({ ...current, extra: { ...current.extra, [key]: value } }));

  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setSaved('');
    try {
      const body = bodyOf(draft, id !== undefined);
      if (id === undefined) {
        const created = await ok(api.POST('/v1/ai/llm_models/', { body: body as never }));
        navigate(`/models/${created.id}?created=1`);
        return;
      }
      const changed = await ok(
        api.PATCH('/v1/ai/llm_models/{id}/', { params: { path: { id } }, body: body as never }),
      );
      setStored(changed);
      setDraft(draftOf(changed));
      setSaved('Saved.');
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  const testConnection = async () => {
    if (id === undefined) return;
    setTest(null);
    try {
      const body = bodyOf(draft, true);
      const result = await ok(
        api.POST('/v1/ai/llm_models/test_connection/{id}/', {
          params: { path: { id } },
          body: body as never,
        }),
      );
      setTest({ result });
    } catch (failure) {
      setTest({ error: failure });
    }
  };

  if (id !== undefined && !stored && !error) return <Loading what="the model" />;
  const fields = PROVIDER_FIELDS[draft.provider];
  const shown = [
    'name',
    'provider',
    'model_name',
    'prompt',
    'timeout',
    'max_output_tokens',
    'structured_output',
    'input_price_per_1m_tokens',
    'output_price_per_1m_tokens',
    'fallback_models',
    ...fields.map((field) => `extra_data.${field.key}`),
  ];
  const text = (key: keyof Draft, label: string, props: Record<string, unknown> = {}) => (
    <Field label={label} name={key} error={error}>
      {(field) => (
        <input
          {...field}
          {...props}
          disabled={!admin}
          value={draft[key] as string}
          onInput={(event) => set({ [key]: event.currentTarget.value })}
        />
      )}
    </Field>
  );
  return (
    <section aria-labelledby="page-title">
      <p>
        <Link href="/models">← LLM models</Link>
      </p>
      <h1 id="page-title">{stored ? `Model ${stored.name}` : 'New LLM model'}</h1>
      {new URLSearchParams(window.location.search).has('created') && (
        <Notice tone="success">Created. Test its connection below.</Notice>
      )}
      <form onSubmit={(event) => void save(event)} class="form">
        {text('name', 'Name', { required: true })}
        <Field label="Provider" name="provider" error={error}>
          {(field) => (
            <select
              {...field}
              disabled={!admin}
              value={draft.provider}
              onChange={(event) =>
                set({ provider: event.currentTarget.value as Provider, structured_output: '' })
              }
            >
              {PROVIDERS.map((provider) => (
                <option key={provider} value={provider}>
                  {PROVIDER_LABELS[provider]}
                </option>
              ))}
            </select>
          )}
        </Field>
        {text('model_name', 'Model name at the provider', { required: true })}
        <Field label="System prompt" name="prompt" error={error}>
          {(field) => (
            <textarea
              {...field}
              rows={4}
              disabled={!admin}
              value={draft.prompt}
              onInput={(event) => set({ prompt: event.currentTarget.value })}
            />
          )}
        </Field>
        {text('timeout', 'Timeout (seconds, 1 to 600)', { type: 'number', min: 1, max: 600 })}
        {text('max_output_tokens', 'Most output tokens per reply', { type: 'number', min: 1, max: 1000000 })}
        <Field label="Response schema sent as" name="structured_output" error={error}>
          {(field) => (
            <select
              {...field}
              disabled={!admin}
              value={draft.structured_output}
              onChange={(event) =>
                set({ structured_output: event.currentTarget.value as Draft['structured_output'] })
              }
            >
              <option value="">the provider's default</option>
              <option value="native">native (JSON-schema response format)</option>
              <option value="instructions">instructions appended to the prompt</option>
            </select>
          )}
        </Field>
        {text('input_price_per_1m_tokens', 'Input price per 1M tokens (empty: unpriced)', {
          inputMode: 'decimal',
        })}
        {text('output_price_per_1m_tokens', 'Output price per 1M tokens (empty: unpriced)', {
          inputMode: 'decimal',
        })}
        {text('fallback_models', 'Fallback models (ids of up to 3 other models, in order)', {
          placeholder: 'e.g. 4, 7',
        })}
        <fieldset>
          <legend>Connection ({PROVIDER_LABELS[draft.provider]})</legend>
          <p class="hint">{MODEL_URL_RULE}.</p>
          {fields.map((spec) => {
            const name = `extra_data.${spec.key}`;
            const storedValue = stored?.extra_data[spec.key];
            if (spec.kind === 'boolean')
              return (
                <Field key={spec.key} label={spec.label} name={name} error={error}>
                  {(field) => (
                    <input
                      {...field}
                      type="checkbox"
                      disabled={!admin}
                      checked={draft.extra[spec.key] === true}
                      onChange={(event) => setExtra(spec.key, event.currentTarget.checked)}
                    />
                  )}
                </Field>
              );
            const hint =
              spec.kind === 'secret' && isMasked(storedValue)
                ? `Stored: ${String(storedValue)}. Leave empty to keep it.`
                : spec.hint;
            return (
              <Field key={spec.key} label={spec.label} name={name} error={error} hint={hint}>
                {(field) =>
                  spec.kind === 'json' ? (
                    <textarea
                      {...field}
                      rows={3}
                      class="mono"
                      disabled={!admin}
                      value={String(draft.extra[spec.key] ?? '')}
                      onInput={(event) => setExtra(spec.key, event.currentTarget.value)}
                    />
                  ) : (
                    <TypedInput
                      kind={spec.kind === 'secret' ? 'password' : spec.kind === 'url' ? 'url' : 'text'}
                      {...field}
                      autoComplete="off"
                      required={spec.required && !(spec.kind === 'secret' && stored)}
                      disabled={!admin}
                      value={String(draft.extra[spec.key] ?? '')}
                      onInput={(event) => setExtra(spec.key, event.currentTarget.value)}
                    />
                  )
                }
              </Field>
            );
          })}
        </fieldset>
        <ErrorNotice error={error} shownFields={shown} />
        {saved && <Notice tone="success">{saved}</Notice>}
        {admin && (
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              {id === undefined ? 'Create model' : 'Save changes'}
            </button>
            {id !== undefined && (
              <button type="button" onClick={() => void testConnection()}>
                Test connection
              </button>
            )}
          </div>
        )}
      </form>
      {test && <TestOutcome {...test} />}
    </section>
  );
}

function TestOutcome({ result, error }: { result?: ConnectionTest; error?: unknown }) {
  if (error) return <ErrorNotice error={error} />;
  if (!result) return null;
  const cost = result.cost === null ? 'hidden' : typeof result.cost === 'string' ? result.cost : 'unpriced';
  return (
    <div class="notice notice-success" role="status" data-testid="connection-test">
      <p>
        <strong>The model answered</strong> in {result.latency_ms} ms ({result.attempts} attempt
        {result.attempts === 1 ? '' : 's'}), cost {cost}, {result.usage.input_tokens} input and{' '}
        {result.usage.output_tokens} output tokens.
      </p>
      <blockquote>{result.reply_excerpt}</blockquote>
    </div>
  );
}
