import { z } from 'zod';

/**
 * The Pack Optimizer's notes on a Service's runs (spec 2.4, docs/decisions/0027 and 0056): the
 * free-form document its processor wrote after each run, as kept for the next runs' CONFIG prompts.
 */
export const optimizerNoteSchema = z.object({
  id: z.string().describe('The note: one per run end the optimizer was asked about'),
  service: z.number().int(),
  service_item: z.number().int(),
  pipeline: z.number().int().describe('The pipeline (run) the notes are about'),
  run: z.number().int().describe("That run's number among the Service Item's runs"),
  processor: z.number().int().nullable().describe('The pack_optimizer processor that wrote it'),
  processor_name: z
    .string()
    .nullable()
    .describe("That processor's name (also a deleted one's); null when unknown"),
  text: z.string().describe('The notes as the optimizer wrote them'),
  created_at: z.iso.datetime(),
});
export type OptimizerNoteView = z.infer<typeof optimizerNoteSchema>;
