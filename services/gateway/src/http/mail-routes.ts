import { z } from 'zod';
import { problemTable, route } from '@pack/http-kit';
import type { Notifier } from '../domain/mail';
import { emailSchema } from './user-routes';

/** Answered by the gateway although under the settings prefix (domain/routing.ts GATEWAY_PATHS). */
export const TEST_MAIL_PATH = '/v1/core/general_settings/test_mail/';

const problems = problemTable({
  400: 'Invalid request',
  403: 'Not an admin',
  409: 'SMTP is not enabled in the general settings',
  502: 'The SMTP server is unreachable, refused the login or TLS failed (the detail says which)',
});

export function mailRoutes(notifier: Notifier) {
  return [
    route({
      method: 'post',
      path: TEST_MAIL_PATH,
      summary:
        'Send a test mail with the current SMTP settings (served by the gateway, which sends all mail)',
      access: ['admin'],
      body: z.strictObject({ to: emailSchema }),
      responses: {
        200: {
          description: 'The SMTP server accepted the mail',
          schema: z.object({ sent: z.literal(true), to: z.string() }),
        },
        ...problems(400, 401, 403, 409, 502),
      },
      handler: async ({ body }) => {
        await notifier.test(body.to);
        return { body: { sent: true as const, to: body.to } };
      },
    }),
  ];
}
