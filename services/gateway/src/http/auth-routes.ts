import { z } from 'zod';
import { roleSchema } from '@pack/contracts';
import {
  BadRequestError,
  ForbiddenError,
  problemSchema,
  problemSpec,
  problemTable,
  route,
} from '@pack/http-kit';
import type { Authenticator, IssuedToken } from '../domain/authenticator';
import { tokenFromHeader } from '../domain/token';
import type { SignIn } from '../domain/sign-in';
import { OIDC_CALLBACK_PATH } from '../domain/identity-provider-setup';
import { LOGIN_COOKIE, LoginCookie } from './login-cookie';
import { orToConsole, returnToSchema, toConsole } from './console-return';

export const LOGIN_PATH = '/v1/core/auth/login/';
export const LOGOUT_PATH = '/v1/core/auth/logout/';
export const OIDC_LOGIN_PATH = '/v1/core/auth/oidc/login/';
export const SIGN_IN_METHODS_PATH = '/v1/core/auth/methods/';
export { OIDC_CALLBACK_PATH };

const loginBody = z.strictObject({
  username: z.string().min(1, 'must not be empty').max(256),
  password: z.string().min(1, 'must not be empty').max(1024),
});
const signedIn = z.object({
  id: z.number().int().describe('Id of the token: DELETE /v1/core/tokens/<id>/ revokes it'),
  token: z.string(),
  expires_at: z.string(),
  user: z.object({ id: z.number().int(), username: z.string(), role: roleSchema }),
});
const callbackQuery = z.object({
  code: z
    .string()
    .max(4096)
    .optional()
    .describe('The authorization code; a callback carries `code` or `error` (400 with neither)'),
  state: z.string().max(1024).optional().describe('The state the sign-in started with'),
  error: z.string().max(256).optional().describe("The identity provider's error, when it refused"),
});
const methods = z.object({
  password: z.boolean().describe('LDAP is enabled: POST /v1/core/auth/login/ takes a user name and password'),
  identity_provider: z
    .boolean()
    .describe('Identity-provider OAuth is enabled: GET /v1/core/auth/oidc/login/ starts a sign-in'),
});
const startQuery = z.object({ return_to: returnToSchema.optional() });
const SIGN_IN_OFF = 'This way of signing in is off, or the account is in no group that grants a role';
const problems = problemTable({
  400: 'Invalid request',
  403: SIGN_IN_OFF,
  409: 'Sign-in through the identity provider is enabled but not usable: `errors` names each setting to set (oauth.ISSUER_URL, oauth.CLIENT_ID, oauth.CLIENT_SECRET), and where',
  502: 'The directory or identity provider is misconfigured or unreachable (the detail says which)',
});

const answer = (issued: IssuedToken) => ({
  id: issued.tokenId,
  token: issued.token,
  expires_at: (issued.expiresAt ?? new Date(0)).toISOString(),
  user: issued.user,
});

export interface AuthRoutesOptions {
  signIn: SignIn;
  authenticator: Authenticator;
  internalSecret: string;
  /** TRUSTED_PROXY_HOPS: how many X-Forwarded-For entries, from the right, our own proxies added. */
  trustedProxyHops: number;
}

/**
 * The address of the client as the last trusted proxy saw it. Entries further left were written
 * by the client itself and could be anything, so they are never used.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | undefined,
  hops: number,
): string {
  const chain = [
    ...(forwardedFor ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean),
    peer ?? 'unknown',
  ];
  return chain[Math.max(0, chain.length - 1 - hops)]!;
}

export function authRoutes({ signIn, authenticator, internalSecret, trustedProxyHops }: AuthRoutesOptions) {
  const cookie = new LoginCookie(internalSecret);
  const secure = (uri: string) => uri.startsWith('https:');

  return [
    route({
      method: 'get',
      path: SIGN_IN_METHODS_PATH,
      summary: 'Which ways of signing in are on (the switches of the general settings), for a sign-in page',
      access: 'public',
      responses: {
        200: { description: 'The ways that are on', schema: methods },
        503: problemSpec('The general settings cannot be read; try again shortly'),
      },
      handler: async () => ({ body: await signIn.methods() }),
    }),
    route({
      method: 'post',
      path: LOGIN_PATH,
      summary:
        'Sign in with a directory (LDAP) user name and password: an API token that expires (SIGNIN_TOKEN_TTL_SECONDS)',
      access: 'public',
      body: loginBody,
      responses: {
        200: { description: 'Signed in; the token is shown only here', schema: signedIn },
        ...problems(400, 403, 502),
        401: problemSpec('Unknown user name or wrong password (one message for both)'),
        429: {
          description: 'Too many failed sign-ins from this address; see Retry-After',
          schema: problemSchema,
          headers: { 'retry-after': 'Seconds to wait' },
        },
      },
      handler: async ({ body, req }) => ({
        body: answer(
          await signIn.withPassword(
            body.username,
            body.password,
            clientAddress(req.socket.remoteAddress, req.get('x-forwarded-for'), trustedProxyHops),
          ),
        ),
      }),
    }),
    route({
      method: 'post',
      path: LOGOUT_PATH,
      summary: 'Sign out: revokes the token this request carries (any token, signed-in or issued)',
      access: 'authenticated',
      responses: {
        204: { description: 'Revoked; every gateway replica refuses it within REVOCATION_POLL_MS' },
        ...problems(401),
      },
      handler: async ({ req }) => {
        const token = tokenFromHeader(req.get('authorization'));
        if (token) await authenticator.revokeToken(token);
        return { status: 204 };
      },
    }),
    route({
      method: 'get',
      path: OIDC_LOGIN_PATH,
      summary:
        'Start signing in through the identity provider (OpenID Connect): redirects to its sign-in page. The issuer, client and redirect base are those of the general settings (Identity-provider OAuth), a blank one taken from the gateway (OIDC_ISSUER_URL, PUBLIC_URL)',
      access: 'public',
      query: startQuery,
      responses: {
        302: {
          description:
            "To the identity provider's authorization endpoint; with return_to, a refusal instead redirects to the console's sign-in page, which shows it",
          headers: {
            location: 'The authorization URL',
            'set-cookie': 'The pending sign-in (encrypted, 10 minutes)',
          },
        },
        ...problems(403, 409, 502),
      },
      handler: async ({ req, query }) =>
        orToConsole(query.return_to, async () => {
          const { url, pending } = await signIn.startIdentityProvider(
            `${req.protocol}://${req.get('host') ?? '127.0.0.1'}`,
          );
          const sealed = cookie.seal({ ...pending, returnTo: query.return_to }, secure(pending.redirectUri));
          return { status: 302, headers: { location: url, 'set-cookie': sealed } };
        }),
    }),
    route({
      method: 'get',
      path: OIDC_CALLBACK_PATH,
      summary:
        'Where the identity provider sends the browser back: checks state, nonce and PKCE, answers an API token that expires',
      access: 'public',
      query: callbackQuery,
      cookies: {
        [LOGIN_COOKIE]: 'The pending sign-in that GET /v1/core/auth/oidc/login/ set (encrypted, 10 minutes)',
      },
      responses: {
        200: { description: 'Signed in; the token is shown only here', schema: signedIn },
        302: {
          description:
            "A sign-in started with return_to: to the console's sign-in page, the token (or the refusal) in the URL's fragment, which the browser never sends on",
          headers: { location: '/sign-in#token=...&next=<return_to>, or /sign-in#error=...' },
        },
        400: problemSpec('No sign-in in progress (no cookie), or an answer that does not check out'),
        ...problems(409, 502),
        403: problemSpec(
          `${SIGN_IN_OFF}; or the sign-in cookie is not one this platform set, or is older than 10 minutes`,
        ),
      },
      handler: async ({ req, query }) => {
        const pending = cookie.open(req.get('cookie'));
        const clear = { 'set-cookie': cookie.clear(secure(pending?.redirectUri ?? `${req.protocol}:`)) };
        const search = req.originalUrl.includes('?')
          ? req.originalUrl.slice(req.originalUrl.indexOf('?'))
          : '';
        return orToConsole(
          pending?.returnTo,
          async () => {
            if (!pending && cookie.present(req.get('cookie')))
              throw new ForbiddenError(
                `This sign-in was not started here, or is older than 10 minutes; start again at GET ${OIDC_LOGIN_PATH}.`,
                { headers: clear },
              );
            if (!pending)
              throw new BadRequestError(
                `No sign-in in progress (its cookie is missing or expired); start at GET ${OIDC_LOGIN_PATH}.`,
                { headers: clear },
              );
            if (!query.code && !query.error)
              throw new BadRequestError('The callback carries no code.', { headers: clear });
            const issued = await signIn.finishIdentityProvider(search, pending);
            if (pending.returnTo) return toConsole(pending.returnTo, { token: issued.token }, clear);
            return { body: answer(issued), headers: clear };
          },
          clear,
        );
      },
    }),
  ];
}
