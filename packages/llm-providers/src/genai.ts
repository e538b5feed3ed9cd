import { Agent, type Dispatcher } from 'undici';
import { ProviderHttpError, ProviderInvalidResponseError } from './errors';
import { requestJson, type CallContext } from './http';
import { readChatCompletion } from './openai-shape';
import type { TokenCache } from './token-cache';
import type { GenerateRequest } from './types';

export interface GenaiConfig {
  token_url: string;
  request_url: string;
  credentials: string;
  verify_ssl: boolean;
  request_payload?: Record<string, unknown>;
  /** The token request's body: `form` (OAuth2, RFC 6749 section 4.4; the default) or `json`. */
  token_request_format?: 'form' | 'json';
}

/** Lifetime assumed when the token answer has no expires_in. */
const DEFAULT_LIFETIME_S = 300;

/** Enterprise gateway: token_url -> access token -> OpenAI-compatible request_url. */
export async function genaiGenerate(
  ctx: CallContext,
  config: GenaiConfig,
  req: GenerateRequest,
  cache: TokenCache,
  insecureDispatcher?: Dispatcher,
  responseFormat?: Record<string, unknown>,
) {
  // verify_ssl false affects this call only: its own Agent, closed afterwards.
  const ownAgent =
    config.verify_ssl || insecureDispatcher
      ? undefined
      : new Agent({ connect: { rejectUnauthorized: false } });
  const dispatcher = config.verify_ssl ? undefined : (insecureDispatcher ?? ownAgent);
  try {
    // The encoding is part of the key: a token server refusing one encoding must not be hidden by a token fetched with the other.
    const key = `${config.token_url}\n${config.token_request_format ?? 'form'}\n${config.credentials}`;
    const tokenOf = () =>
      cache.get(key, async () => {
        const json = await requestJson(ctx, {
          url: config.token_url,
          headers: { authorization: config.credentials },
          ...(config.token_request_format === 'json'
            ? { body: { grant_type: 'client_credentials' } }
            : { form: { grant_type: 'client_credentials' } }),
          what: 'token request',
          dispatcher,
        });
        if (typeof json.access_token !== 'string' || !json.access_token)
          throw new ProviderInvalidResponseError('token request: the answer has no access_token');
        const expiresIn = Number(json.expires_in);
        return { token: json.access_token, lifetimeS: expiresIn > 0 ? expiresIn : DEFAULT_LIFETIME_S };
      });
    const payload = config.request_payload ?? {};
    const earlier = Array.isArray(payload.messages) ? (payload.messages as unknown[]) : [];
    const body: Record<string, unknown> = {
      model: req.model,
      ...payload,
      messages: [...earlier, ...req.messages],
    };
    if (req.maxOutputTokens !== undefined && payload.max_tokens === undefined)
      body.max_tokens = req.maxOutputTokens;
    if (responseFormat) body.response_format = responseFormat;
    const what = 'genai request';
    const send = async (token: string) => {
      ctx.addSecret(token);
      return requestJson(ctx, {
        url: config.request_url,
        headers: { authorization: `Bearer ${token}` },
        body,
        what,
        dispatcher,
      });
    };
    const token = await tokenOf();
    let json;
    try {
      json = await send(token);
    } catch (err) {
      // A token revoked or expired early: fetch a new one, once.
      if (!(err instanceof ProviderHttpError) || err.status !== 401) throw err;
      cache.invalidate(key, token);
      json = await send(await tokenOf());
    }
    return readChatCompletion(json, what);
  } finally {
    await ownAgent?.close();
  }
}
