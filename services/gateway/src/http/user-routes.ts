import { z } from 'zod';
import { roleSchema } from '@pack/contracts';
import { idParams, NotFoundError, problemTable, route } from '@pack/http-kit';
import type { TokenStore, UserRecord } from '../domain/store';

/**
 * An address mail can reach: zod's email pattern, at most 254 characters, a local part of at
 * most 64 and domain labels of at most 63 (RFC 5321 4.5.3.1, RFC 1035 2.3.4), which the
 * document's `format: email` implies.
 */
export const emailSchema = z
  .email({ error: 'must be an email address' })
  .max(254)
  .refine(
    (value) =>
      value.slice(0, value.lastIndexOf('@')).length <= 64 &&
      value
        .slice(value.lastIndexOf('@') + 1)
        .split('.')
        .every((label) => label.length <= 63),
    'must be an email address: at most 64 characters before the @ and 63 in each part of the domain',
  );
const userView = z.object({
  id: z.number().int(),
  username: z.string(),
  role: roleSchema,
  origin: z
    .enum(['local', 'ldap', 'oidc'])
    .describe('How the user signs in: an admin-issued token, LDAP or the identity provider'),
  email: z.string().nullable().describe('Where Change Instance mail goes'),
});
const problems = problemTable({ 400: 'Invalid request', 403: 'Not an admin', 404: 'No such user' });
const view = (user: UserRecord) => ({
  id: user._id,
  username: user.username,
  role: user.role,
  origin: user.origin ?? 'local',
  email: user.email ?? null,
});

/** Who the caller is: what a client (the console) needs to choose what to offer. */
const meView = z.object({
  id: z.number().int(),
  username: z.string(),
  role: roleSchema.describe('What the token may do: admin, service_owner or consumer'),
});

export function userRoutes(users: TokenStore) {
  return [
    route({
      method: 'get',
      path: '/v1/core/me/',
      summary: 'The user the token belongs to: id, user name and role',
      access: 'authenticated',
      responses: {
        200: { description: 'The caller', schema: meView },
        ...problems(401),
      },
      handler: ({ principal }) => ({
        body: { id: principal.id, username: principal.username, role: principal.role },
      }),
    }),
    route({
      method: 'get',
      path: '/v1/core/users/:id/',
      summary: 'A user: role, how they sign in, email address',
      access: ['admin'],
      params: idParams,
      responses: {
        200: { description: 'The user', schema: userView },
        ...problems(400, 401, 403, 404),
      },
      handler: async ({ params }) => {
        const user = await users.findUserById(params.id);
        if (!user) throw new NotFoundError(`user ${params.id} does not exist`);
        return { body: view(user) };
      },
    }),
    route({
      method: 'patch',
      path: '/v1/core/users/:id/',
      summary:
        "Set a user's email address (null removes it); a directory or identity-provider address replaces it at the next sign-in",
      access: ['admin'],
      params: idParams,
      body: z.strictObject({ email: emailSchema.nullable().optional() }),
      responses: {
        200: { description: 'The user after the change', schema: userView },
        ...problems(400, 401, 403, 404),
      },
      handler: async ({ params, body }) => {
        const user = await users.updateUser(params.id, { email: body.email ?? null });
        if (!user) throw new NotFoundError(`user ${params.id} does not exist`);
        return { body: view(user) };
      },
    }),
  ];
}
