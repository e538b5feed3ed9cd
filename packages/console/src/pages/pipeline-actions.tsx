/** What one can do to a pipeline: start a stage, retrigger with feedback, push PackData. */
import { useState } from 'preact/hooks';
import { api, ok } from '../api/client';
import { ApiError } from '../api/problem';
import { ErrorNotice, Field, Notice } from '../components/ui';

type StageName = 'config' | 'verify' | 'execution';
const STAGES: StageName[] = ['config', 'verify', 'execution'];

export function PipelineActions({ item, onChange }: { item: number; onChange: () => void }) {
  const [feedback, setFeedback] = useState('');
  const [pushStage, setPushStage] = useState<StageName>('execution');
  const [data, setData] = useState('{}');
  const [restart, setRestart] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState('');
  const id = item;

  const act = async (what: string, run: () => Promise<unknown>) => {
    setError(null);
    setDone('');
    try {
      await run();
      setDone(what);
      onChange();
    } catch (failure) {
      setError(failure);
    }
  };
  const push = () =>
    act(`PackData pushed into ${pushStage.toUpperCase()}.`, async () => {
      let body: unknown;
      try {
        body = JSON.parse(data);
      } catch (failure) {
        throw new ApiError(400, {
          detail: 'Nothing was pushed.',
          errors: { pack_data: [`is not JSON: ${(failure as Error).message}`] },
        });
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw new ApiError(400, {
          detail: 'Nothing was pushed.',
          errors: { pack_data: ['must be a JSON object'] },
        });
      return ok(
        api.POST('/v1/external/serviceowner/pack/data/service_item/{id}/{stage}/', {
          params: {
            path: { id, stage: pushStage },
            // Pushed into EXECUTION: an error report may restart from CONFIG; otherwise the run ends.
            query: pushStage === 'execution' && restart ? { retrigger: 'true' } : {},
          },
          body: body as Record<string, never>,
        }),
      );
    });

  return (
    <section class="panel" aria-labelledby="actions-title">
      <h2 id="actions-title">Actions</h2>
      <div class="actions">
        {STAGES.map((stage) => (
          <button
            key={stage}
            type="button"
            onClick={() =>
              void act(`${stage.toUpperCase()} started.`, () =>
                ok(
                  api.POST('/v1/external/serviceowner/pack/trigger/service_item/{id}/{stage}/', {
                    params: { path: { id, stage } },
                  }),
                ),
              )
            }
          >
            Start {stage.toUpperCase()}
          </button>
        ))}
      </div>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void act('Retriggered from CONFIG.', () =>
            ok(
              api.POST('/v1/external/serviceowner/pack/retrigger/service_item/{id}/', {
                params: { path: { id } },
                body: feedback.trim() ? { feedback } : {},
              }),
            ),
          );
        }}
      >
        <Field
          label="Feedback for the retrigger (becomes part of the CONFIG context)"
          name="feedback"
          error={error}
        >
          {(props) => (
            <textarea
              {...props}
              rows={3}
              maxLength={4000}
              value={feedback}
              onInput={(event) => setFeedback(event.currentTarget.value)}
            />
          )}
        </Field>
        <button type="submit">Retrigger</button>
      </form>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void push();
        }}
      >
        <Field label="Stage to push PackData into" name="stage" error={error}>
          {(props) => (
            <select
              {...props}
              value={pushStage}
              onChange={(event) => setPushStage(event.currentTarget.value as StageName)}
            >
              {STAGES.map((stage) => (
                <option key={stage} value={stage}>
                  {stage.toUpperCase()}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="PackData (JSON object)" name="pack_data" error={error}>
          {(props) => (
            <textarea
              {...props}
              class="mono"
              rows={5}
              value={data}
              onInput={(event) => setData(event.currentTarget.value)}
            />
          )}
        </Field>
        {pushStage === 'execution' && (
          <Field
            label="An error report: restart the pipeline from CONFIG with it (otherwise the run is complete)"
            name="retrigger"
            error={error}
          >
            {(props) => (
              <input
                {...props}
                type="checkbox"
                checked={restart}
                onChange={(event) => setRestart(event.currentTarget.checked)}
              />
            )}
          </Field>
        )}
        <button type="submit">Push PackData</button>
      </form>
      <ErrorNotice error={error} shownFields={['feedback', 'stage', 'pack_data']} />
      {done && <Notice tone="success">{done}</Notice>}
    </section>
  );
}
