/** One stage of a pipeline: state, times, cost, error, its PackData and its generative UI. */
import type { Stage } from '../api/types';
import { JsonView, dateTime } from '../components/ui';
import { GenUi } from '../gen-ui/render';
import { formatCost } from './dashboard-format';

export const STATE_TEXT: Record<string, string> = {
  OK: 'OK',
  FAILED: 'Failed',
  SCHEDULED: 'Scheduled',
  WAITING_FOR_RESPONSE: 'Waiting for the model',
};

export function StageCard({ stage, currency }: { stage: Stage; currency: string | null }) {
  const state = stage.state ?? 'not run';
  return (
    <article class="stage" aria-labelledby={`stage-${stage.stage}`} data-stage={stage.stage}>
      <h2 id={`stage-${stage.stage}`}>
        {stage.stage}{' '}
        <span class={`state state-${state.toLowerCase()}`}>{STATE_TEXT[state] ?? 'Not run'}</span>
      </h2>
      <dl class="pairs">
        <div>
          <dt>Started</dt>
          <dd>{dateTime(stage.started_at)}</dd>
        </div>
        <div>
          <dt>Finished</dt>
          <dd>{dateTime(stage.finished_at)}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>{formatCost(stage.cost, currency)}</dd>
        </div>
        <div>
          <dt>Processor</dt>
          <dd>
            {stage.processor === null ? '—' : `${stage.processor_name ?? 'Processor'} #${stage.processor}`}
          </dd>
        </div>
        <div>
          <dt>Model</dt>
          <dd>{stage.model_name ?? '—'}</dd>
        </div>
        {stage.fallback_from !== null && stage.answered_model_id !== null && (
          <div>
            <dt>Answered by</dt>
            <dd>
              fallback model #{stage.answered_model_id}
              {stage.answered_model_name ? ` (${stage.answered_model_name})` : ''}, for model #
              {stage.fallback_from}
            </dd>
          </div>
        )}
        {stage.origin && (
          <div>
            <dt>PackData from</dt>
            <dd>{stage.origin === 'pushed' ? 'pushed from outside' : 'the model'}</dd>
          </div>
        )}
      </dl>
      {stage.error && (
        <p class="notice notice-error" role="note">
          {stage.error}
        </p>
      )}
      {stage.gen_ui !== null && (
        <>
          <h3>Generated view</h3>
          <GenUi value={stage.gen_ui} valid={stage.gen_ui_valid} label={`${stage.stage} generated view`} />
        </>
      )}
      {stage.pack_data !== null && (
        <details open={stage.gen_ui === null}>
          <summary>PackData</summary>
          <JsonView value={stage.pack_data} label={`${stage.stage} PackData`} />
        </details>
      )}
    </article>
  );
}
