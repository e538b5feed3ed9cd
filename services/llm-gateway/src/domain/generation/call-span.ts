import { inSpan, recordsLlmContent, SpanKind, type Attributes, type Span } from '@pack/tracing';
import type { FinishedCall, GenerateRequest } from '../calls/calls';
import type { EffectiveModel } from '../models/llm-models';

/**
 * One LLM call as a span named by the GenAI semantic conventions (`chat <model>`): the system,
 * the requested model, token usage and (ours) its cost as an exact decimal string. A call taken
 * over after a crash runs in the redelivered request's trace and says how many holders it had.
 */
export function inCallSpan<T extends { finished: FinishedCall }>(
  request: GenerateRequest,
  model: EffectiveModel | null,
  takeovers: number,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const attributes: Attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.system': model?.provider ?? 'unknown',
    'gen_ai.request.model': model?.model_name ?? 'unknown',
    'gen_ai.request.max_tokens': model?.max_output_tokens ?? undefined,
    'pack.llm.model_id': request.llm_model_id,
    'pack.llm.request_id': request.request_id,
    'pack.processor.id': request.processor_id ?? undefined,
    'pack.llm.takeovers': takeovers,
  };
  return inSpan(
    `chat ${model?.model_name ?? 'unknown'}`,
    { kind: SpanKind.CLIENT, attributes },
    async (span) => {
      const done = await work(span);
      const { finished } = done;
      span.setAttributes({
        'gen_ai.response.model': finished.model_name ?? undefined,
        'gen_ai.usage.input_tokens': finished.input_tokens,
        'gen_ai.usage.output_tokens': finished.output_tokens,
        'pack.llm.cost': finished.cost ?? undefined,
        'pack.llm.unpriced': finished.unpriced,
        'pack.llm.outcome': finished.outcome,
        'pack.llm.attempts': finished.attempts,
        // A fallback's answer (docs/decisions/0045): the model that answered, when not the one asked.
        'pack.llm.answered_model_id': finished.result.answered_model_id ?? undefined,
        'pack.llm.fallback_from': finished.result.fallback_from ?? undefined,
        ...(finished.outcome !== 'ok' && { 'error.type': finished.outcome }),
      });
      // Prompts and completions only when an operator asks (PACK_TRACE_LLM_CONTENT=true), and
      // then through the span redaction like every attribute.
      if (recordsLlmContent())
        span.addEvent('gen_ai.content', {
          'gen_ai.prompt': JSON.stringify(request.messages),
          'gen_ai.completion': finished.result.output ?? '',
        });
      return done;
    },
  );
}
