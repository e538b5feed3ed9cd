/** Choosing one of the Services the caller may see (processors and webhooks belong to one). */
import { api, ok } from '../api/client';
import type { Service } from '../api/types';
import { useLoad } from './use-load';
import { ErrorNotice, Field } from './ui';

export function useServices() {
  return useLoad(
    () =>
      ok(api.GET('/v1/catalog/services/', { params: { query: { limit: 100 } } })).then(
        (page) => page.results,
      ),
    [],
  );
}

export function ServiceSelect({
  services,
  value,
  onChange,
  error,
  label = 'Service',
  name = 'service',
}: {
  services: Service[] | undefined;
  value: number | null;
  onChange: (id: number | null) => void;
  error?: unknown;
  label?: string;
  name?: string;
}) {
  return (
    <Field label={label} name={name} error={error}>
      {(props) => (
        <select
          {...props}
          value={value === null ? '' : String(value)}
          onChange={(event) => onChange(event.currentTarget.value ? Number(event.currentTarget.value) : null)}
        >
          <option value="">Choose a Service</option>
          {(services ?? []).map((service) => (
            <option key={service.id} value={service.id}>
              {service.name} (#{service.id})
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

export function ServicesError({ error }: { error: unknown }) {
  return <ErrorNotice error={error} />;
}
