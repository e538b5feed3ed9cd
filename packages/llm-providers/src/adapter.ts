import { assistantGenerate } from './assistant';
import { defaultTokenCache, genaiGenerate, type TokenCache } from './genai';
import { CallContext } from './http';
import type {
  AdapterOptions,
  GenerateRequest,
  GenerateResult,
  LlmAdapter,
  ProviderConfig,
  Usage,
} from './types';
import { vendor1Generate } from './vendor1';
import { vendor2Generate } from './vendor2';
import { vendor3Generate } from './vendor3';

/** The secrets of a configuration: never in an error message. */
function secretsOf(config: ProviderConfig): string[] {
  switch (config.provider) {
    case 'vendor1':
    case 'vendor2':
    case 'vendor3':
      return [config.api_key];
    case 'vendor1_assistant':
      return [config.VENDOR1_API_KEY];
    case 'genai':
      // Basic credentials are base64 of user:password; the encoded part is the secret.
      return [config.credentials, ...config.credentials.split(/\s+/).filter((s) => s.length >= 8)];
  }
}

/** One adapter per model profile; `generate` makes a single attempt (no retries here). */
export function createAdapter(
  config: ProviderConfig,
  options: AdapterOptions,
  tokenCache: TokenCache = defaultTokenCache,
): LlmAdapter {
  if (!(options.timeout > 0)) throw new RangeError('timeout must be a positive number of seconds');
  return {
    async generate(req: GenerateRequest): Promise<GenerateResult> {
      const ctx = new CallContext(options.timeout, secretsOf(config), options.dispatcher, req.signal);
      try {
        let out: { text: string; usage: Usage };
        switch (config.provider) {
          case 'vendor1':
            out = await vendor1Generate(ctx, config, req);
            break;
          case 'vendor2':
            out = await vendor2Generate(ctx, config, req);
            break;
          case 'vendor3':
            out = await vendor3Generate(ctx, config, req);
            break;
          case 'genai':
            out = await genaiGenerate(ctx, config, req, tokenCache, options.insecureDispatcher);
            break;
          case 'vendor1_assistant':
            out = await assistantGenerate(ctx, config, req, options.pollIntervalMs);
            break;
        }
        return { ...out, latency_ms: ctx.elapsedMs() };
      } finally {
        ctx.dispose();
      }
    },
  };
}
