import { z } from 'zod';
import { optimizerNoteSchema, type OptimizerNoteView } from '@pack/contracts';
import {
  idSchema,
  listQuery,
  pageOf,
  pageRequest,
  type ListKey,
  pageSchema,
  problemSpec as problem,
  problemTable,
  route,
} from '@pack/http-kit';
import type { OptimizerNotes } from '../domain/side-processors/optimizer-notes';

export const OPTIMIZER_NOTES_PATH = '/v1/ai/services/:id/optimizer_notes/';

const params = z.object({ id: idSchema.describe("The Service's id (catalog)") });
/** Notes are listed newest first, then by id: both make the key. */
const noteKey: ListKey<OptimizerNoteView> = {
  shape: ['date', 'string'],
  of: (note) => [new Date(note.created_at), note.id],
};
const query = listQuery(noteKey).extend({
  processor: idSchema.optional().describe('Only the notes this pack_optimizer processor wrote'),
  service_item: idSchema.optional().describe("Only the notes on this Service Item's runs"),
});
const problems = problemTable({
  403: 'Consumers may not read optimizer notes',
  404: 'No such Service among your Services',
});

/** The Pack Optimizer's notes of a Service (docs/decisions/0056). */
export function optimizerNoteRoutes(notes: OptimizerNotes) {
  return [
    route({
      method: 'get',
      path: OPTIMIZER_NOTES_PATH,
      summary:
        "The Pack Optimizer's notes on the runs of a Service's items, newest first: the document its pack_optimizer processor wrote after each run ended, the same notes the next runs' CONFIG prompts carry. Your Services only (admins: any)",
      access: ['admin', 'service_owner'],
      params,
      query,
      responses: {
        200: { description: 'A page of notes, newest first', schema: pageSchema(optimizerNoteSchema) },
        400: problem('Invalid id or query; `errors` names each field'),
        ...problems(401, 403, 404),
      },
      handler: async ({ principal, params, query, req }) => {
        const filter = {
          service_id: params.id,
          ...(query.processor !== undefined && { processor_id: query.processor }),
          ...(query.service_item !== undefined && { service_item_id: query.service_item }),
        };
        const paging = pageRequest(query);
        const page = await notes.list(principal, filter, paging.limit, paging.start);
        return { body: pageOf(req, query, page.count, page.items, noteKey) };
      },
    }),
  ];
}
