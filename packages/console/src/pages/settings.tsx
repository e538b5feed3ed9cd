/** The general settings editor (admins): every group, secrets masked, the Generate Schema action. */
import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { approximate } from '../api/exact-json';
import { ApiError } from '../api/problem';
import { CHANGE_INSTANCE_STATES, type Settings } from '../api/types';
import { Check, ErrorNotice, Field, Loading, Notice, TypedInput } from '../components/ui';
import { refreshSettings } from '../settings-store';
import {
  changesOf,
  draftOf,
  GROUPS,
  READ_ONLY,
  SECRET_FIELDS,
  SETTINGS_HINTS,
  SETTINGS_LABELS,
  WRITE_ONLY,
  type Draft,
  type FieldValue,
  type GroupName,
} from './settings-fields';
import { asText } from '../text';

const CURRENCIES = ['USD', 'EUR', 'GBP'];

export function SettingsPage() {
  const [stored, setStored] = useState<Settings | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState('');
  const load = async () => {
    // The form edits numbers as numbers: kept number texts are read as their values.
    const settings = approximate(await ok(api.GET('/v1/core/general_settings/')));
    setStored(settings);
    setDraft(draftOf(settings));
  };
  useEffect(() => {
    load().catch(setError);
  }, []);

  const set = (group: string, field: string, value: FieldValue) =>
    setDraft((current) =>
      current ? { ...current, [group]: { ...current[group], [field]: value } } : current,
    );

  const save = async (event: Event) => {
    event.preventDefault();
    if (!stored || !draft) return;
    setError(null);
    setSaved('');
    try {
      const { patch, errors } = changesOf(draftOf(stored), draft);
      if (Object.keys(errors).length)
        throw new ApiError(400, { detail: 'Check the highlighted fields; nothing was saved.', errors });
      if (Object.keys(patch).length === 0) {
        setSaved('Nothing changed.');
        return;
      }
      await ok(api.PATCH('/v1/core/general_settings/', { body: patch as never }));
      await load();
      await refreshSettings();
      setSaved(
        `Saved: ${Object.keys(patch)
          .map((group) => SETTINGS_LABELS[group as GroupName].title)
          .join(', ')}.`,
      );
    } catch (failure) {
      setError(failure);
    }
  };
  const generate = async () => {
    setError(null);
    try {
      await ok(api.POST('/v1/core/general_settings/generate_ui_schema/'));
      await load();
      setSaved('The generative UI catalog schema was generated from the component registry.');
    } catch (failure) {
      setError(failure);
    }
  };

  if (!draft || !stored) return error ? <ErrorNotice error={error} /> : <Loading what="the settings" />;
  const shown = GROUPS.flatMap((group) =>
    Object.keys(SETTINGS_LABELS[group].fields).map((field) => `${group}.${field}`),
  );
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">General settings</h1>
      <form class="form settings" onSubmit={(event) => void save(event)}>
        {GROUPS.map((group) => (
          <fieldset key={group} data-group={group}>
            <legend>{SETTINGS_LABELS[group].title}</legend>
            {Object.entries(SETTINGS_LABELS[group].fields).map(([field, label]) => (
              <SettingField
                key={field}
                group={group}
                field={field}
                label={label}
                value={draft[group]![field] ?? null}
                stored={(stored[group] as Record<string, unknown>)[field]}
                error={error}
                onChange={(value) => set(group, field, value)}
              />
            ))}
            {group === 'ai_integration' && (
              <button type="button" onClick={() => void generate()}>
                Generate Schema
              </button>
            )}
          </fieldset>
        ))}
        <ErrorNotice error={error} shownFields={shown} />
        {saved && <Notice tone="success">{saved}</Notice>}
        <div class="actions sticky-actions">
          <button type="submit" class="primary">
            Save settings
          </button>
        </div>
      </form>
    </section>
  );
}

interface FieldProps {
  group: string;
  field: string;
  label: string;
  value: FieldValue;
  stored: unknown;
  error: unknown;
  onChange: (value: FieldValue) => void;
}

function SettingField({ group, field, label, value, stored, error, onChange }: FieldProps) {
  const name = `${group}.${field}`;
  if (typeof value === 'boolean')
    return (
      <Check label={label} name={name} checked={value} disabled={READ_ONLY.has(field)} onChange={onChange} />
    );
  if (Array.isArray(value))
    return (
      <fieldset class="filters">
        <legend>{label} (none: all)</legend>
        {CHANGE_INSTANCE_STATES.map((state) => (
          <Check
            key={state}
            label={state}
            checked={value.includes(state)}
            onChange={(on) => onChange(on ? [...value, state] : value.filter((entry) => entry !== state))}
          />
        ))}
      </fieldset>
    );
  const secret = SECRET_FIELDS.has(field);
  const hint = WRITE_ONLY.has(field)
    ? 'Write-only: never shown. Type a new one to replace it.'
    : secret
      ? `Stored: ${typeof stored === 'string' && stored ? stored : 'none'}. Leave empty to keep it.`
      : SETTINGS_HINTS[name]?.(value, window.location.origin);
  return (
    <Field label={label} name={name} error={error} hint={hint}>
      {(props) =>
        field === 'currency' ? (
          <select {...props} value={asText(value)} onChange={(event) => onChange(event.currentTarget.value)}>
            {CURRENCIES.map((currency) => (
              <option key={currency}>{currency}</option>
            ))}
          </select>
        ) : field === 'generative_ui_catalog_schema' ? (
          <textarea
            {...props}
            class="mono"
            rows={10}
            value={asText(value)}
            onInput={(event) => onChange(event.currentTarget.value)}
          />
        ) : typeof value === 'number' ? (
          <input
            {...props}
            type="number"
            value={value}
            onInput={(event) => onChange(Number(event.currentTarget.value))}
          />
        ) : (
          <TypedInput
            kind={secret ? 'password' : 'text'}
            {...props}
            autoComplete="off"
            value={asText(value)}
            onInput={(event) => onChange(event.currentTarget.value)}
          />
        )
      }
    </Field>
  );
}
