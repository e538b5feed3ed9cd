import type { GenerateReplyKind } from '@pack/contracts';
import type { GenerateResult } from '../domain/records/pipeline-records';
import { OPTIMIZER_REQUEST_PREFIX } from '../domain/side-processors/optimizer';
import { VALIDATOR_REQUEST_PREFIX } from '../domain/side-processors/validator';

/**
 * The kind of a generate result: the `reply_kind` its request named, echoed by the llm-gateway,
 * which also picked the result's event type by it (docs/decisions/0036). A result without one
 * (its request was sent before the field existed, or an llm-gateway of before answered it, during
 * a rolling upgrade) came as `llm.generate.completed.v1` and is told apart by its request id, as
 * before.
 */
export function resultKind(result: GenerateResult): GenerateReplyKind {
  if (result.reply_kind !== undefined) return result.reply_kind;
  if (result.request_id.startsWith(VALIDATOR_REQUEST_PREFIX)) return 'validation';
  if (result.request_id.startsWith(OPTIMIZER_REQUEST_PREFIX)) return 'optimization';
  return 'stage';
}
