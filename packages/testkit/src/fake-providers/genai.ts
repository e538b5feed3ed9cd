import { randomBytes } from 'node:crypto';
import { chatCompletion, openAiError } from './openai';
import { FakeProviderServer, headerOf } from './server';

/**
 * An enterprise gateway: POST /oauth/token with `Authorization: <credentials>` issues bearer
 * tokens; POST /chat answers OpenAI-compatible completions to a valid token. `revokeTokens()`
 * makes every issued token answer 401, as after a key rotation.
 */
export async function startFakeGenai(options: { credentials: string; expiresIn?: number }) {
  const valid = new Set<string>();
  const control = { expiresIn: options.expiresIn ?? 3600, issued: 0 };
  const fake = new FakeProviderServer({
    route: (req) => {
      if (req.method !== 'POST') return undefined;
      if (req.path === '/oauth/token') {
        if (headerOf(req, 'authorization') !== options.credentials)
          return { status: 401, body: { error: 'invalid_client', error_description: 'bad credentials' } };
        const token = `tok_${randomBytes(12).toString('hex')}`;
        valid.add(token);
        control.issued += 1;
        return {
          status: 200,
          body: { access_token: token, token_type: 'Bearer', expires_in: control.expiresIn },
        };
      }
      if (req.path !== '/chat') return undefined;
      const token = (headerOf(req, 'authorization') ?? '').replace(/^Bearer /, '');
      if (!valid.has(token)) return { status: 401, body: openAiError(401, 'token expired or invalid') };
      return 'generate';
    },
    success: (req, reply) => chatCompletion(req, reply),
    empty: (req) => chatCompletion(req, { text: '' }, ''),
    error: openAiError,
  });
  await fake.start();
  return Object.assign(fake, {
    tokenUrl: `${fake.url}/oauth/token`,
    requestUrl: `${fake.url}/chat`,
    control,
    revokeTokens: () => valid.clear(),
  });
}
