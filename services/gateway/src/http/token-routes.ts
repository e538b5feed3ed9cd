import { z } from 'zod';
import { roleSchema } from '@pack/contracts';
import {
  idKey,
  idParams,
  listQuerySchema,
  NotFoundError,
  pageOf,
  pageRequest,
  pageSchema,
  problemTable,
  route,
} from '@pack/http-kit';
import type { Authenticator } from '../domain/authenticator';

const userSchema = z.object({ id: z.number().int(), username: z.string(), role: roleSchema });
const createBody = z.strictObject({
  username: z
    .string()
    .min(1)
    .max(150)
    .regex(/^[A-Za-z0-9_.@-]+$/, 'letters, digits and _ . @ - only'),
  role: roleSchema,
});
const tokenView = z.object({
  id: z.number().int(),
  prefix: z.string(),
  user: userSchema.nullable(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  /** Sign-in tokens expire; tokens an admin issues do not (null). */
  expires_at: z.string().nullable(),
});
const problems = problemTable({
  400: 'Invalid request',
  403: 'Not an admin',
  404: 'No such token',
  409: 'The user exists with another role',
});

export function tokenRoutes(authenticator: Authenticator) {
  return [
    route({
      method: 'post',
      path: '/v1/core/tokens/',
      summary: 'Create a user (if new) and an API token for it; the token is shown only in this response',
      access: ['admin'],
      body: createBody,
      responses: {
        201: {
          description: 'Created',
          schema: z.object({ id: z.number().int(), token: z.string(), user: userSchema }),
        },
        ...problems(400, 401, 403, 409),
      },
      handler: async ({ body }) => {
        const issued = await authenticator.issue(body.username, body.role);
        return { status: 201, body: { id: issued.tokenId, token: issued.token, user: issued.user } };
      },
    }),
    route({
      method: 'get',
      path: '/v1/core/tokens/',
      summary: 'List API tokens (never the tokens themselves)',
      access: ['admin'],
      query: listQuerySchema,
      responses: {
        200: { description: 'A page of tokens', schema: pageSchema(tokenView) },
        ...problems(400, 401, 403),
      },
      handler: async ({ query, req }) => {
        const paging = pageRequest(query);
        const { count, items } = await authenticator.list(paging.limit, paging.start);
        const results = items.map(({ token, user }) => ({
          id: token._id,
          prefix: token.prefix,
          user: user ? { id: user._id, username: user.username, role: user.role } : null,
          created_at: token.created_at.toISOString(),
          revoked_at: token.revoked_at?.toISOString() ?? null,
          expires_at: token.expires_at?.toISOString() ?? null,
        }));
        return { body: pageOf(req, query, count, results, idKey) };
      },
    }),
    route({
      method: 'delete',
      path: '/v1/core/tokens/:id/',
      summary: 'Revoke an API token; every gateway replica refuses it within a second',
      access: ['admin'],
      params: idParams,
      responses: {
        204: { description: 'Revoked' },
        ...problems(400, 401, 403, 404),
      },
      handler: async ({ params }) => {
        if (!(await authenticator.revoke(params.id)))
          throw new NotFoundError(`token ${params.id} does not exist`);
        return { status: 204 };
      },
    }),
  ];
}
