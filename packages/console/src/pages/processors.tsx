/** AI processors of a Service, with the schema editor and the rules of each kind. */
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import type { Processor, ProcessorKind } from '../api/types';
import { ServiceSelect, useServices } from '../components/service-picker';
import { Check, ErrorNotice, Field, Notice } from '../components/ui';
import { useLoad } from '../components/use-load';
import { useSettings } from '../settings-store';
import { BudgetPanel } from './budget-panel';
import { OptimizerNotesPanel } from './optimizer-notes-panel';
import { KINDS, offeredKinds, parseSchema, schemaRule } from './processor-rules';

interface Draft {
  name: string;
  kind: ProcessorKind;
  llm_model: string;
  prompt: string;
  schema: string;
  generative_ui: boolean;
  active: boolean;
}
const EMPTY: Draft = {
  name: '',
  kind: 'config',
  llm_model: '',
  prompt: '',
  schema: '',
  generative_ui: false,
  active: false,
};
const draftOf = (processor: Processor): Draft => ({
  name: processor.name,
  kind: processor.kind,
  llm_model: String(processor.llm_model),
  prompt: processor.prompt,
  schema: processor.response_schema ? JSON.stringify(processor.response_schema, null, 2) : '',
  generative_ui: processor.generative_ui,
  active: processor.active,
});
const SHOWN = [
  'name',
  'kind',
  'llm_model',
  'prompt',
  'response_schema',
  'generative_ui',
  'active',
  'service',
];

export function ProcessorsPage() {
  const services = useServices();
  const [service, setService] = useState<number | null>(null);
  const [editing, setEditing] = useState<Processor | 'new' | null>(null);
  const processors = useLoad(
    async () =>
      service === null
        ? null
        : (
            await ok(
              api.GET('/v1/ai/processors/', {
                params: { query: { service, limit: 100 } },
              }),
            )
          ).results,
    [service],
  );
  const models = useLoad(
    () =>
      ok(api.GET('/v1/ai/llm_models/', { params: { query: { limit: 100 } } })).then((page) => page.results),
    [],
  );
  const modelName = (id: number) => models.data?.find((model) => model.id === id)?.name ?? `#${id}`;
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">AI processors</h1>
      <ErrorNotice error={services.error ?? models.error} />
      <ServiceSelect
        services={services.data}
        value={service}
        onChange={(id) => {
          setService(id);
          setEditing(null);
        }}
      />
      {service !== null && <BudgetPanel service={service} />}
      <ErrorNotice error={processors.error} />
      {processors.data && (
        <>
          <div class="table-scroll">
            <table>
              <caption>Processors of the Service</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Kind</th>
                  <th scope="col">LLM model</th>
                  <th scope="col">Schema</th>
                  <th scope="col">Generative UI</th>
                  <th scope="col">Active</th>
                </tr>
              </thead>
              <tbody>
                {processors.data.map((processor) => (
                  <tr key={processor.id}>
                    <th scope="row">
                      <button type="button" class="link" onClick={() => setEditing(processor)}>
                        {processor.name}
                      </button>
                    </th>
                    <td>{KINDS[processor.kind]}</td>
                    <td>{modelName(processor.llm_model)}</td>
                    <td>
                      {processor.response_schema ? (processor.response_schema_note ?? 'custom') : 'none'}
                    </td>
                    <td>{processor.generative_ui ? 'on' : 'off'}</td>
                    <td>{processor.active ? 'active' : 'inactive'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {processors.data.length === 0 && <p class="muted">No processors yet.</p>}
          <button type="button" class="primary" onClick={() => setEditing('new')}>
            New processor
          </button>
        </>
      )}
      {editing && service !== null && (
        <ProcessorForm
          key={editing === 'new' ? 'new' : editing.id}
          service={service}
          processor={editing === 'new' ? null : editing}
          models={models.data ?? []}
          onSaved={() => {
            setEditing(null);
            void processors.reload();
          }}
        />
      )}
      {service !== null && <OptimizerNotesPanel key={service} service={service} />}
    </section>
  );
}

function ProcessorForm({
  service,
  processor,
  models,
  onSaved,
}: {
  service: number;
  processor: Processor | null;
  models: { id: number; name: string }[];
  onSaved: () => void;
}) {
  const { settings } = useSettings();
  // Settings not read yet: every kind (the API decides); then only the kinds the flags show.
  const kinds = settings
    ? offeredKinds(settings.ai_integration, processor?.kind)
    : (Object.keys(KINDS) as ProcessorKind[]);
  const [draft, setDraft] = useState<Draft>(() =>
    processor ? draftOf(processor) : { ...EMPTY, kind: kinds.includes(EMPTY.kind) ? EMPTY.kind : kinds[0]! },
  );
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const set = (patch: Partial<Draft>) => setDraft((current) => ({ ...current, ...patch }));
  const rule = schemaRule(draft.kind);

  const save = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const response_schema = rule.allowed ? parseSchema(draft.schema) : null;
      const body = {
        name: draft.name,
        kind: draft.kind,
        llm_model: Number(draft.llm_model),
        prompt: draft.prompt,
        response_schema,
        generative_ui: draft.generative_ui,
        active: draft.active,
      };
      if (processor)
        await ok(api.PATCH('/v1/ai/processors/{id}/', { params: { path: { id: processor.id } }, body }));
      else await ok(api.POST('/v1/ai/processors/', { body: { ...body, service } }));
      onSaved();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="form panel" onSubmit={(event) => void save(event)} aria-labelledby="processor-form-title">
      <h2 id="processor-form-title">{processor ? `Processor ${processor.name}` : 'New processor'}</h2>
      <Field label="Name" name="name" error={error}>
        {(props) => (
          <input
            {...props}
            required
            value={draft.name}
            onInput={(event) => set({ name: event.currentTarget.value })}
          />
        )}
      </Field>
      <Field label="Kind" name="kind" error={error}>
        {(props) => (
          <select
            {...props}
            value={draft.kind}
            onChange={(event) => set({ kind: event.currentTarget.value as ProcessorKind })}
          >
            {kinds.map((kind) => (
              <option key={kind} value={kind}>
                {KINDS[kind]}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="LLM model" name="llm_model" error={error}>
        {(props) => (
          <select
            {...props}
            required
            value={draft.llm_model}
            onChange={(event) => set({ llm_model: event.currentTarget.value })}
          >
            <option value="">Choose a model</option>
            {models.map((model) => (
              <option key={model.id} value={model.id}>
                {model.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Prompt" name="prompt" error={error}>
        {(props) => (
          <textarea
            {...props}
            rows={4}
            value={draft.prompt}
            onInput={(event) => set({ prompt: event.currentTarget.value })}
          />
        )}
      </Field>
      <Field label="Response JSON Schema" name="response_schema" error={error} hint={rule.note}>
        {(props) => (
          <textarea
            {...props}
            class="mono"
            rows={8}
            disabled={!rule.allowed}
            placeholder={rule.allowed ? '{"type": "object", "properties": {}}' : ''}
            value={rule.allowed ? draft.schema : ''}
            onInput={(event) => set({ schema: event.currentTarget.value })}
          />
        )}
      </Field>
      <Check
        label="Enable generative UI"
        checked={draft.generative_ui}
        onChange={(value) => set({ generative_ui: value })}
      />
      <Check
        label="Active (one active processor per Service and kind)"
        checked={draft.active}
        onChange={(value) => set({ active: value })}
      />
      {processor?.response_schema_note && <Notice tone="warning">{processor.response_schema_note}</Notice>}
      <ErrorNotice error={error} shownFields={SHOWN} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {processor ? 'Save changes' : 'Create processor'}
        </button>
      </div>
    </form>
  );
}
