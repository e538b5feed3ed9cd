import { assistantGenerate } from './assistant';
import { genaiGenerate } from './genai';
import { TokenCache } from './token-cache';
import { ProviderError } from './errors';
import { CallContext } from './http';
import { jsonValues } from './redact';
import type {
  AdapterOptions,
  GenerateRequest,
  GenerateResult,
  LlmAdapter,
  ProviderConfig,
  Usage,
} from './types';
import { planSchema, type SchemaPlan } from './schema-plan';
import { vendor1Generate } from './vendor1';
import { vendor2Generate } from './vendor2';
import { vendor3Generate } from './vendor3';

/** The secrets of a configuration: never in an error message (nor in a connection test's excerpt). */
export function secretsOf(config: ProviderConfig): string[] {
  switch (config.provider) {
    case 'vendor1':
    case 'vendor2':
    case 'vendor3':
      return [config.api_key];
    case 'vendor1_assistant':
      return [config.VENDOR1_API_KEY];
    case 'genai':
      // Every request_payload value counts as a secret: it is free JSON and may carry tokens.
      return [...credentialForms(config.credentials), ...jsonValues(config.request_payload)];
  }
}

/**
 * The Authorization value, its token part and, for Basic, the decoded user:password and password
 * (a provider may echo any of them).
 */
function credentialForms(credentials: string): string[] {
  const forms = [credentials, ...credentials.split(/\s+/).filter((s) => s.length >= 8)];
  const basic = /^basic\s+([A-Za-z0-9+/=]+)$/i.exec(credentials.trim());
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    forms.push(decoded, decoded.slice(decoded.indexOf(':') + 1));
  }
  return forms;
}

/** One adapter per model profile; `generate` makes a single attempt (no retries here). */
export function createAdapter(
  config: ProviderConfig,
  options: AdapterOptions,
  tokenCache: TokenCache = options.tokenCache ?? new TokenCache(),
): LlmAdapter {
  if (!(options.timeout > 0)) throw new RangeError('timeout must be a positive number of seconds');
  return {
    async generate(request: GenerateRequest): Promise<GenerateResult> {
      const plan = request.schema ? planSchema(config.provider, request.schema, request.schemaAs) : undefined;
      const req = plan?.mode === 'text' ? withInstructions(request, plan.instructions) : request;
      const responseFormat =
        plan?.mode === 'native' && plan.provider === 'openai' ? plan.responseFormat : undefined;
      const ctx = new CallContext(options.timeout, secretsOf(config), options.dispatcher, req.signal);
      try {
        let out: { text: string; usage: Usage };
        switch (config.provider) {
          case 'vendor1':
            out = await vendor1Generate(ctx, config, req, responseFormat);
            break;
          case 'vendor2':
            out = await vendor2Generate(ctx, config, req);
            break;
          case 'vendor3':
            out = await vendor3Generate(
              ctx,
              config,
              req,
              plan?.mode === 'native' && plan.provider === 'gemini' ? plan.responseSchema : undefined,
            );
            break;
          case 'genai':
            out = await genaiGenerate(
              ctx,
              config,
              req,
              tokenCache,
              options.insecureDispatcher,
              responseFormat,
            );
            break;
          case 'vendor1_assistant':
            out = await assistantGenerate(ctx, config, req, options.pollIntervalMs);
            break;
        }
        return { ...out, latency_ms: ctx.elapsedMs(), ...modeOf(plan) };
      } catch (error) {
        // Every message, whichever protocol step wrote it, leaves without the call's secrets.
        if (error instanceof ProviderError) error.message = ctx.scrub(error.message);
        throw error;
      } finally {
        ctx.dispose();
      }
    },
  };
}

function modeOf(plan: SchemaPlan | undefined): Pick<GenerateResult, 'mode' | 'mode_reason'> {
  if (!plan) return {};
  return plan.mode === 'text' && plan.reason
    ? { mode: 'text', mode_reason: plan.reason }
    : { mode: plan.mode };
}

/** The schema instructions go at the end of the final user prompt, where models heed them most. */
function withInstructions(req: GenerateRequest, instructions: string): GenerateRequest {
  const messages = [...req.messages];
  let last = messages.map((m) => m.role).lastIndexOf('user');
  if (last < 0) {
    messages.push({ role: 'user', content: '' });
    last = messages.length - 1;
  }
  const target = messages[last]!;
  messages[last] = {
    ...target,
    content: target.content ? `${target.content}\n\n${instructions}` : instructions,
  };
  return { ...req, messages };
}
