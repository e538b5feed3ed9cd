/** Names for the API's shapes, all taken from the generated `paths` (never written by hand). */
import { CHANGE_INSTANCE_STATES as STATES } from '@pack/contracts';
import type { paths } from './schema';

type Operation<P extends keyof paths, M extends string> = M extends keyof paths[P] ? paths[P][M] : never;
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;

/** The JSON body a route answers with status S. */
export type Answer<P extends keyof paths, M extends string, S extends number = 200> =
  Operation<P, M> extends { responses: infer R } ? (S extends keyof R ? JsonOf<R[S]> : never) : never;

/** The JSON body a route takes. */
export type RequestBody<P extends keyof paths, M extends string> =
  Operation<P, M> extends { requestBody?: infer B } ? JsonOf<NonNullable<B>> : never;

type Results<T> = T extends { results: (infer R)[] } ? R : never;

export type Me = Answer<'/v1/core/me/', 'get'>;
export type Role = Me['role'];
export type Settings = Answer<'/v1/core/general_settings/', 'get'>;
export type SettingsPatch = RequestBody<'/v1/core/general_settings/', 'patch'>;
export type Dashboard = Answer<'/v1/ai/dashboard/', 'get'>;
export type GroupBy = Dashboard['group_by'];
export type LlmModel = Answer<'/v1/ai/llm_models/{id}/', 'get'>;
export type NewLlmModel = RequestBody<'/v1/ai/llm_models/', 'post'>;
export type Provider = LlmModel['provider'];
export type ConnectionTest = Answer<'/v1/ai/llm_models/test_connection/{id}/', 'post'>;
export type Processor = Answer<'/v1/ai/processors/{id}/', 'get'>;
export type ProcessorKind = Processor['kind'];
export type AiBudget = Answer<'/v1/ai/services/{id}/budget/', 'get'>;
export type Service = Results<Answer<'/v1/catalog/services/', 'get'>>;
export type ServiceItem = Results<Answer<'/v1/catalog/service_items/', 'get'>>;
export type Pipeline = Answer<'/v1/external/serviceowner/pack/pipelines/{id}/', 'get'>;
export type Stage = Pipeline['stages'][number];
export type ChangeInstance = Results<Answer<'/v1/catalog/change_instances/', 'get'>>;
export type ChangeInstanceState = ChangeInstance['state'];
export type Webhook = Answer<'/v1/external/serviceowner/webhooks/{id}/', 'get'>;
export type WebhookListItem = Results<Answer<'/v1/external/serviceowner/webhooks/', 'get'>>;
export type NewWebhook = RequestBody<'/v1/external/serviceowner/webhooks/', 'post'>;
export type WebhookResponse = Results<Answer<'/v1/external/serviceowner/webhooks/{id}/responses/', 'get'>>;
export type WebhookRecovery = Answer<
  '/v1/external/serviceowner/webhooks/{id}/recoveries/{recovery_id}/',
  'get'
>;

/** The states, from the contracts; checked against the API's own enum. */
export const CHANGE_INSTANCE_STATES: readonly ChangeInstanceState[] =
  STATES satisfies readonly ChangeInstanceState[];
