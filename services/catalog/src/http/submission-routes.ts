import { z } from 'zod';
import { route } from '@pack/http-kit';
import type { SubmitDeclaration } from '../domain/declarations/submit-declaration';
import { idParams, pick } from './common';
import {
  changeInstanceDetailView,
  declarationView,
  serviceItemView,
  toChangeInstanceDetailView,
  toDeclarationView,
  toServiceItemView,
} from './views';

const submitBody = z.strictObject({
  declaration: z
    .record(z.string(), z.unknown(), { error: 'must be a JSON object' })
    .describe(
      'The declaration. Any JSON object; its numbers are kept exactly as sent, text for text (a 19-digit id, a long decimal, 3.10 not 3.1, 1e2 not 100), and every read returns them the same way.',
    ),
});

export function submissionRoutes(submissions: SubmitDeclaration) {
  return [
    route({
      method: 'post',
      path: '/v1/catalog/services/:id/declarations/',
      summary:
        "Submit a declaration for a Service: updates the consumer's Service Item and creates a Change Instance (approved at once with auto-approval)",
      access: ['consumer'],
      params: idParams,
      body: submitBody,
      exactNumbers: true,
      responses: {
        201: {
          description: 'Submitted',
          schema: z.object({
            declaration: declarationView,
            service_item: serviceItemView,
            change_instance: changeInstanceDetailView,
          }),
        },
        ...pick(400, 401, 403, 404),
      },
      handler: async ({ principal, params, body }) => {
        const submission = await submissions.submit(principal, params.id, body.declaration);
        return {
          status: 201,
          body: {
            declaration: toDeclarationView(submission.declaration),
            service_item: toServiceItemView(
              submission.item.item,
              submission.item.service,
              submission.item.pointers,
            ),
            change_instance: toChangeInstanceDetailView(submission.changeInstance),
          },
        };
      },
    }),
  ];
}
