/** Follows the pipeline and the webhook through the API, printing every change as it is seen. */
import type { PipelineStageView, PipelineView, WebhookResponseView } from '@pack/contracts';
import { DemoError, problem, sleep, type Api } from './api';
import type { WebhookReceiver } from './local-servers';
import { excerpt, say } from './report';

const PACK = '/v1/external/serviceowner/pack/';
const POLL_MS = 300;
/** Webhook response reads are rate limited per caller (120 a minute by default): read them less often. */
const RESPONSES_POLL_MS = 1_000;

const PENDING_RESPONSE = ['SCHEDULED', 'WAITING_FOR_RESPONSE'];

interface Watch {
  api: Api;
  token: string;
  serviceItem: number;
  webhook: number;
  receiver: WebhookReceiver;
  deadline: number;
}

/** Resolves with the pipeline's id once EXECUTION is OK and the delivery arrived; throws otherwise. */
export async function watchPipeline(watch: Watch): Promise<number> {
  const { api, token } = watch;
  const seen = new Map<string, string>();
  const responses = new Map<number, string>();
  let pipeline: PipelineView | undefined;
  let executionOk = false;
  let responsesReadAt = 0;
  for (;;) {
    const latest = await api.call<PipelineView>(
      'GET',
      `${PACK}pipelines/latest/service_item/${watch.serviceItem}/`,
      token,
    );
    if (latest.status === 200) {
      if (!pipeline) say(`pipeline #${latest.body.id} run ${latest.body.run} started by the approval`);
      pipeline = latest.body;
      for (const stage of latest.body.stages) {
        if (!stage.state || seen.get(stage.stage) === stage.state) continue;
        seen.set(stage.stage, stage.state);
        showStage(stage, latest.body.currency);
        if (stage.state === 'FAILED') throw new DemoError(`the ${stage.stage} stage failed: ${stage.error}`);
        if (stage.stage === 'EXECUTION' && stage.state === 'OK') executionOk = true;
      }
    } else if (latest.status !== 404) {
      throw new DemoError(`reading the pipeline answered ${problem(latest)}`);
    }

    const delivered = watch.receiver.deliveries.length > 0;
    if (delivered && Date.now() - responsesReadAt >= RESPONSES_POLL_MS) {
      responsesReadAt = Date.now();
      await showResponses(watch, responses);
    }
    const recorded = [...responses.values()].some((state) => !PENDING_RESPONSE.includes(state));
    if (executionOk && delivered && pipeline && (recorded || Date.now() > watch.deadline - 5_000)) {
      const cost = pipeline.total_cost === null ? 'hidden' : `${pipeline.total_cost} ${pipeline.currency}`;
      say(`pipeline #${pipeline.id} done: CONFIG, VERIFY and EXECUTION OK, total cost ${cost}`);
      return pipeline.id;
    }
    if (Date.now() > watch.deadline) {
      const missing = [
        ...(executionOk ? [] : [`EXECUTION OK (stages seen: ${describeSeen(seen)})`]),
        ...(delivered ? [] : ['the webhook delivery']),
      ];
      throw new DemoError(`timed out waiting for ${missing.join(' and ')}`);
    }
    await sleep(POLL_MS);
  }
}

function showStage(stage: PipelineStageView, currency: string | null): void {
  const name = stage.stage.padEnd(9);
  if (stage.state === 'OK') {
    say(`${name} OK       cost ${stage.cost ?? 'hidden'} ${currency ?? ''}`.trimEnd());
    say(`${' '.repeat(9)} PackData ${excerpt(stage.pack_data)}`);
  } else if (stage.state === 'FAILED') {
    say(`${name} FAILED   ${stage.error ?? ''}`);
  } else {
    say(`${name} ${stage.state} (processor #${stage.processor})`);
  }
}

async function showResponses(watch: Watch, shown: Map<number, string>): Promise<void> {
  const route = `/v1/external/serviceowner/webhooks/${watch.webhook}/responses/`;
  const answer = await watch.api.call<{ results: WebhookResponseView[] }>('GET', route, watch.token);
  if (answer.status !== 200) return;
  for (const response of answer.body.results) {
    if (shown.get(response.id) === response.state) continue;
    shown.set(response.id, response.state);
    say(
      `webhook response #${response.id} recorded: ${response.state}, ` +
        `HTTP ${response.status_code ?? '-'}, ${response.attempts.length} attempt(s)`,
    );
  }
}

function describeSeen(seen: Map<string, string>): string {
  return seen.size ? [...seen].map(([stage, state]) => `${stage} ${state}`).join(', ') : 'none';
}
