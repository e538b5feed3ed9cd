/** LLM models: the list, and one model to create, edit and test. */
import { api, ok, PAGE_SIZE } from '../api/client';
import { Link, LoadState, Pager } from '../components/ui';
import { usePaged } from '../components/use-load';
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
  const models = usePaged(
    (page) =>
      ok(
        api.GET('/v1/ai/llm_models/', {
          params: { query: { ...page } },
        }),
      ),
    { limit: PAGE_SIZE },
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
      <LoadState loaded={models} what="models" />
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
          <Pager label="Models" keys={models.keys} count={models.data.count} next={models.data.next} />
        </>
      )}
    </section>
  );
}
