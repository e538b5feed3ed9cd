/** LLM models: the list, and one model to create, edit and test. */
import { useState } from 'preact/hooks';
import { api, ok, PAGE_SIZE } from '../api/client';
import { ErrorNotice, Link, Loading, Pager } from '../components/ui';
import { useLoad } from '../components/use-load';
import { session } from '../session';
import { ModelForm } from './model-form';
import { PROVIDER_LABELS } from './providers';

export function ModelsPage({ path }: { path: string }) {
  const id = path.split('/')[2];
  if (id === 'new') return <ModelForm />;
  if (id && /^\d+$/.test(id)) return <ModelForm id={Number(id)} />;
  return <ModelList />;
}

function ModelList() {
  const [offset, setOffset] = useState(0);
  const models = useLoad(
    () =>
      ok(
        api.GET('/v1/ai/llm_models/', {
          params: { query: { limit: String(PAGE_SIZE), offset: String(offset) } },
        }),
      ),
    [offset],
  );
  const admin = session.me()?.role === 'admin';
  return (
    <section aria-labelledby="page-title">
      <div class="page-head">
        <h1 id="page-title">LLM models</h1>
        {admin && (
          <Link href="/models/new" class="button primary">
            New model
          </Link>
        )}
      </div>
      <ErrorNotice error={models.error} />
      {models.loading && !models.data && <Loading what="models" />}
      {models.data && (
        <>
          <div class="table-scroll">
            <table>
              <caption class="visually-hidden">LLM models</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Provider</th>
                  <th scope="col">Model</th>
                  <th scope="col">Price in / out per 1M tokens</th>
                  <th scope="col">Timeout</th>
                </tr>
              </thead>
              <tbody>
                {models.data.results.map((model) => (
                  <tr key={model.id}>
                    <th scope="row">
                      <Link href={`/models/${model.id}`}>{model.name}</Link>
                    </th>
                    <td>{PROVIDER_LABELS[model.provider]}</td>
                    <td>{model.model_name}</td>
                    <td>
                      {model.input_price_per_1m_tokens ?? 'unpriced'} /{' '}
                      {model.output_price_per_1m_tokens ?? 'unpriced'}
                    </td>
                    <td>{model.timeout} s</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager
            label="Models"
            offset={offset}
            limit={PAGE_SIZE}
            count={models.data.count}
            onPage={setOffset}
          />
        </>
      )}
    </section>
  );
}
