import { randomBytes } from 'node:crypto';
import { chatCompletion, openAiError } from './openai';
import { FakeProviderServer, headerOf, type RecordedRequest } from './server';

/**
 * An enterprise gateway: POST /oauth/token with `Authorization: <credentials>` and the body
 * `grant_type=client_credentials` issues bearer tokens; POST /chat answers OpenAI-compatible
 * completions to a valid token. `revokeTokens()` makes every issued token answer 401, as after a
 * key rotation. The token body must be form-encoded, as OAuth2 token endpoints take it (RFC 6749
 * section 4.4); `tokenFormat: 'json'` makes it a server that takes JSON only, `any` one that takes both. Anything else is
 * the 400 `invalid_request` such a server answers.
 */
export async function startFakeGenai(options: {
  credentials: string;
  expiresIn?: number;
  tokenFormat?: 'form' | 'json' | 'any';
}) {
  const tokenFormat = options.tokenFormat ?? 'form';
  const valid = new Set<string>();
  const control = { expiresIn: options.expiresIn ?? 3600, issued: 0 };
  const fake = new FakeProviderServer({
    route: (req) => {
      if (req.method !== 'POST') return undefined;
      if (req.path === '/oauth/token') {
        if (headerOf(req, 'authorization') !== options.credentials)
          return { status: 401, body: { error: 'invalid_client', error_description: 'bad credentials' } };
        if (!tokenBodyValid(req, tokenFormat))
          return {
            status: 400,
            body: {
              error: 'invalid_request',
              error_description: `the token request must be ${tokenFormat === 'json' ? 'application/json' : 'application/x-www-form-urlencoded'} with grant_type=client_credentials`,
            },
          };
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

/** The token request's body as the server takes it: grant_type=client_credentials, in its encoding. */
function tokenBodyValid(req: RecordedRequest, format: 'form' | 'json' | 'any'): boolean {
  if (format === 'any') return tokenBodyValid(req, 'form') || tokenBodyValid(req, 'json');
  const type = (headerOf(req, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (format === 'json')
    return (
      type === 'application/json' &&
      (req.body as { grant_type?: unknown } | undefined)?.grant_type === 'client_credentials'
    );
  return (
    type === 'application/x-www-form-urlencoded' &&
    typeof req.body === 'string' &&
    new URLSearchParams(req.body).get('grant_type') === 'client_credentials'
  );
}
