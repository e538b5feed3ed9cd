import { z } from 'zod';
import {
  packDataBodySchema,
  packDataPushedSchema,
  pipelineViewSchema,
  retriggerBodySchema,
  stageOfPath,
  stagePathSchema,
  type Principal,
} from '@pack/contracts';
import { NotFoundError } from '@pack/errors';
import { idSchema, problemSpec as problem, problemTable, route } from '@pack/http-kit';
import type { PackDataPush } from '../domain/pipelines/pack-data-push';
import type { PipelineRecord } from '../domain/records/pipeline-records';
import type { PipelineReads } from '../domain/pipelines/pipeline-reads';
import type { Retrigger } from '../domain/pipelines/retrigger';
import { PACK_PATH } from './pipeline-routes';

const problems = problemTable({
  403: 'Consumers may not run pipelines',
  404: 'No such Service Item (with an approved declaration) or stage among your Services',
});

/** Endpoints 4 (retrigger) and 5 (PackData from outside). */
export function pipelineFlowRoutes(
  flows: { retrigger: Retrigger; push: PackDataPush },
  reads: PipelineReads,
) {
  const access = ['admin', 'service_owner'] as const;
  const view = (principal: Principal, pipeline: PipelineRecord) => reads.view(principal, pipeline);
  return [
    route({
      method: 'post',
      path: `${PACK_PATH}retrigger/service_item/:id/`,
      summary:
        "Restart the Service Item's pipeline from CONFIG on its latest approved declaration (the one approved last, as the catalog's latest_approved_declaration), keeping its execution context (earlier runs' outcomes and errors, feedback, Pack Optimizer notes) for the CONFIG prompt",
      access,
      params: z.object({ id: idSchema }),
      body: retriggerBodySchema,
      responses: {
        202: { description: 'The new pipeline run, CONFIG started', schema: pipelineViewSchema },
        400: problem('Invalid id or body (feedback too long or not a string)'),
        ...problems(401, 403, 404),
        409: problem(
          'AI processors are switched off (errors name ai_integration.show_ai_processor), the Service has no active config processor, or the Change Instance of the latest approved declaration is CANCELLED (nothing runs for it; a retrigger already under way when the cancellation arrives answers 202 with its run cancelled and nothing started)',
        ),
      },
      handler: async ({ principal, params, body }) => {
        const pipeline = await flows.retrigger.retrigger(principal, params.id, body?.feedback);
        return { status: 202, body: await view(principal, pipeline) };
      },
    }),
    route({
      method: 'post',
      path: `${PACK_PATH}data/service_item/:id/:stage/`,
      summary:
        "Store a JSON object (numbers kept exactly as sent, text for text: 3.10 stays 3.10) as a stage's PackData in the Service Item's latest run and start the next stage's active processor (while show_ai_processor is on). Into execution it ends the run (the Change Instance COMPLETED), or with retrigger=true starts a new run from CONFIG, at most 3 times in a row per Change Instance (then the Change Instance is FAILED with the reason)",
      access,
      params: z.object({
        id: idSchema,
        stage: z.string().describe('config, verify or execution (lowercase); anything else is 404'),
      }),
      query: z.object({
        retrigger: z
          .enum(['true', 'false'])
          .optional()
          .describe(
            'execution only: true restarts the pipeline from CONFIG with the pushed data in its context (an error report); default false ends the run',
          ),
      }),
      body: packDataBodySchema,
      exactNumbers: true,
      responses: {
        201: { description: 'The PackData is stored', schema: packDataPushedSchema },
        400: problem('Invalid id or retrigger flag, or the body is not a JSON object'),
        ...problems(401, 403, 404),
        409: problem(
          'The stage kept changing while the PackData was stored (try again), retrigger=true without an active config processor (while AI processors are switched off the data is stored and the run ends FAILED with the reason instead), or the Change Instance of the latest approved declaration is CANCELLED (nothing stored)',
        ),
      },
      handler: async ({ principal, params, query, body }) => {
        const stage = stagePathSchema.safeParse(params.stage);
        if (!stage.success) throw new NotFoundError(`No stage ${params.stage}: config, verify or execution`);
        const outcome = await flows.push.push(principal, params.id, stageOfPath(stage.data), body, {
          retrigger: query.retrigger === 'true',
        });
        return {
          status: 201,
          body: {
            pipeline: await view(principal, outcome.pipeline),
            retrigger: outcome.retrigger && (await view(principal, outcome.retrigger)),
          },
        };
      },
    }),
  ];
}
