/**
 * The run history of a Service Item as its next CONFIG is given it (the execution context,
 * docs/decisions/0054): each run with what each stage produced, its errors, feedback and Pack
 * Optimizer notes, what changed between two consecutive configurations, and the exact text.
 */
import { api, ok } from '../api/client';
import { ErrorNotice, JsonView, Loading } from '../components/ui';
import { useLoad } from '../components/use-load';
import { configChanges } from './config-changes';
import { STATE_TEXT } from './stage-card';

/** `version` changes when the pipeline does, so the history follows it. */
export function RunHistory({ item, version }: { item: number; version: string | undefined }) {
  const context = useLoad(
    () =>
      ok(
        api.GET('/v1/external/serviceowner/pack/pipelines/context/service_item/{id}/', {
          params: { path: { id: item } },
        }),
      ),
    [item, version],
  );
  const data = context.data;
  return (
    <section class="panel" aria-labelledby="history-title" data-testid="run-history">
      <h2 id="history-title">Run history</h2>
      <ErrorNotice error={context.error} />
      {context.loading && !data && <Loading what="the run history" />}
      {data && data.text === null && (
        <p class="muted">No earlier run: the next CONFIG is given no context.</p>
      )}
      {data && data.text !== null && (
        <>
          <p class="muted" data-testid="context-budget">
            What the next CONFIG is given: {data.characters} of {data.budget.characters} characters, the
            budget of {data.model?.model_name ?? 'a model not known'} ({data.budget.window_tokens} tokens
            {data.budget.window_known ? '' : ', assumed'}; newest run first).
            {data.left_out_runs.length > 0 &&
              ` Left out for want of budget: runs ${data.left_out_runs.join(', ')}.`}
          </p>
          <ol class="runs">
            {data.runs.map((run, index) => {
              const previous = data.runs
                .slice(0, index)
                .reverse()
                .find((earlier) => configOf(earlier) !== undefined);
              const changes =
                previous && configOf(run) !== undefined
                  ? configChanges(configOf(previous), configOf(run))
                  : null;
              return (
                <li key={run.run} data-run={run.run}>
                  <h3>
                    Run {run.run}
                    {run.pipeline !== null && ` · pipeline #${run.pipeline}`}
                    {run.cut && ' · cut here: the budget is spent'}
                  </h3>
                  {run.declaration_id !== null && (
                    <p class="muted">
                      Declaration #{run.declaration_id}
                      {run.current_declaration ? ' (the current one)' : ''}
                    </p>
                  )}
                  <dl class="pairs">
                    {run.stages.map((stage) => (
                      <div key={stage.stage} data-history-stage={stage.stage}>
                        <dt>{stage.stage}</dt>
                        <dd>
                          {STATE_TEXT[stage.state ?? 'not run'] ?? 'Not run'}
                          {stage.origin === 'pushed' ? ' · pushed from outside' : ''}
                          {stage.error && ` · error: ${stage.error}`}
                          {stage.pack_data !== null && (
                            <JsonView
                              value={stage.pack_data}
                              label={`Run ${run.run} ${stage.stage} PackData`}
                            />
                          )}
                        </dd>
                      </div>
                    ))}
                  </dl>
                  {changes && (
                    <div data-testid="config-changes">
                      <h4>
                        Configuration changed from run {previous!.run}
                        {changes.length === 0 ? ': no change' : ''}
                      </h4>
                      <ul>
                        {changes.map((line) => (
                          <li key={line}>{line}</li>
                        ))}
                      </ul>
                    </div>
                  )}
                  {run.feedback.map((text, at) => (
                    <p key={`f${at}`} data-testid="feedback">
                      Feedback: {text}
                    </p>
                  ))}
                  {run.optimizer_notes.map((text, at) => (
                    <p key={`o${at}`} data-testid="optimizer-notes">
                      Pack Optimizer notes: {text}
                    </p>
                  ))}
                </li>
              );
            })}
          </ol>
          <details>
            <summary>The context exactly as the next CONFIG receives it</summary>
            <JsonView value={data.text} label="Execution context text" />
          </details>
        </>
      )}
    </section>
  );
}

type Run = { stages: { stage: string; pack_data: unknown }[] };
const configOf = (run: Run) => {
  const config = run.stages.find((stage) => stage.stage === 'CONFIG');
  return config && config.pack_data !== null ? config.pack_data : undefined;
};
