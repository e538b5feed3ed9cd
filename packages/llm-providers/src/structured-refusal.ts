/**
 * Whether a provider's answer refuses the structured-output parameter itself (the model or the
 * server has no JSON-schema response format), so the schema can go as instructions instead.
 *
 * What servers answer: OpenAI `400 {error: {message: "Invalid parameter: 'response_format' of type
 * 'json_schema' is not supported with this model.", param: "response_format"}}`; vLLM (before
 * json_schema) `400 {object: "error", message: "... ('body', 'response_format', 'type') Input should
 * be 'text' or 'json_object' ..."}`; LiteLLM `400 ... does not support parameters:
 * ['response_format']`; Ollama and other gateways `400`/`422` naming response_format or
 * json_schema; Gemini `400 Invalid JSON payload received. Unknown name "responseSchema"`. The
 * parameter's own name appears in each (we sent it; a refusal of anything else does not name it),
 * so that is what is matched, on a 400 or 422 only, never on auth, rate or server errors.
 */
const STRUCTURED_PARAMETER =
  /response_format|json_schema|responseSchema|response_schema|responseMimeType|response_mime_type|structured[ _-]output|guided_json/i;

export function refusesStructuredOutput(status: number, body: string): boolean {
  return (status === 400 || status === 422) && STRUCTURED_PARAMETER.test(body);
}
