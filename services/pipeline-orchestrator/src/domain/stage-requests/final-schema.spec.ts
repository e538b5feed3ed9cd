import Ajv from 'ajv';
import { finalSchema, type FinalSchema, type SchemaInputs } from './final-schema';

const DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

/** An administrator's catalog schema (the setting in force), reduced to one component. */
const catalog = {
  $schema: DRAFT_07,
  title: 'Generative UI catalog',
  type: 'object',
  required: ['components'],
  properties: {
    components: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'props'],
        properties: { type: { const: 'text' }, props: { type: 'object' } },
      },
    },
  },
};
/** A processor's data schema (what the stage's PackData looks like). */
const data = {
  $schema: DRAFT_07,
  type: 'object',
  required: ['manifest'],
  properties: { manifest: { type: 'string' } },
};
/** A processor's deterministic UI schema: exactly one heading, then one table. */
const ui = {
  type: 'object',
  required: ['components'],
  properties: {
    components: {
      type: 'array',
      minItems: 2,
      maxItems: 2,
      items: [
        { type: 'object', properties: { type: { const: 'heading' } } },
        { type: 'object', properties: { type: { const: 'table' } } },
      ],
    },
  },
};

const validator = {
  $schema: DRAFT_07,
  title: 'Change Instance Validator decision',
  type: 'object',
  required: ['decision', 'reasons'],
  additionalProperties: false,
  properties: {
    decision: { type: 'string', enum: ['approve', 'reject'] },
    reasons: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 2000 }, maxItems: 50 },
  },
};
const executor = {
  $schema: DRAFT_07,
  title: 'Universal Executor result',
  type: 'object',
  required: ['status', 'summary', 'steps', 'output'],
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: ['ok', 'failed'] },
    summary: { type: 'string', maxLength: 10_000 },
    steps: {
      type: 'array',
      maxItems: 200,
      items: {
        type: 'object',
        required: ['name', 'status'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 200 },
          status: { type: 'string', enum: ['ok', 'failed', 'skipped'] },
          detail: { type: 'string', maxLength: 10_000 },
        },
      },
    },
    output: { type: 'object' },
  },
};

const inputs = (over: Partial<SchemaInputs>): SchemaInputs => ({
  kind: 'config',
  response_schema: null,
  generative_ui: false,
  catalog_schema: catalog,
  ...over,
});

/** Spec 2.4, "Final schema sent to the LLM": one case per row (rule 3's deterministic UI beside row 2). */
const ROWS: [row: string, given: SchemaInputs, sent: FinalSchema][] = [
  [
    'response schema only: the custom schema',
    inputs({ response_schema: data }),
    { mode: 'custom', schema: data },
  ],
  [
    'generative UI only: the catalog schema in force',
    inputs({ kind: 'verify', generative_ui: true }),
    { mode: 'gen_ui_catalog', schema: catalog },
  ],
  [
    'generative UI only, with its own UI schema: the deterministic schema',
    inputs({ kind: 'execution', generative_ui: true, response_schema: ui }),
    { mode: 'gen_ui_deterministic', schema: ui },
  ],
  [
    'response schema and generative UI: {data, gen_ui}',
    inputs({ response_schema: data, generative_ui: true }),
    {
      mode: 'combined',
      schema: {
        $schema: DRAFT_07,
        type: 'object',
        required: ['data', 'gen_ui'],
        additionalProperties: false,
        properties: {
          data: { type: 'object', required: ['manifest'], properties: { manifest: { type: 'string' } } },
          gen_ui: {
            title: 'Generative UI catalog',
            type: 'object',
            required: ['components'],
            properties: {
              components: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['type', 'props'],
                  properties: { type: { const: 'text' }, props: { type: 'object' } },
                },
              },
            },
          },
        },
      },
    },
  ],
  ['neither: no schema, free-form text', inputs({}), { mode: 'none' }],
  [
    'universal executor: its managed schema, a custom one ignored',
    inputs({ kind: 'universal_executor', response_schema: data, generative_ui: true }),
    { mode: 'universal_executor', schema: executor },
  ],
  [
    'change instance validator: {decision, reasons}',
    inputs({ kind: 'change_instance_validator', generative_ui: true }),
    { mode: 'validator', schema: validator },
  ],
  [
    'pack optimizer: no schema, free-form notes, a stored schema unused',
    inputs({ kind: 'pack_optimizer', response_schema: data, generative_ui: true }),
    { mode: 'none' },
  ],
];

describe('the final schema sent to the model', () => {
  it.each(ROWS)('%s', (_row, given, sent) => {
    expect(finalSchema(given)).toEqual(sent);
  });

  it('keeps local $refs of a combined member pointing inside that member', () => {
    const withRef = {
      type: 'object',
      required: ['item'],
      properties: { item: { $ref: '#/definitions/item' } },
      definitions: { item: { type: 'string', enum: ['a', 'b'] } },
    };
    const sent = finalSchema(inputs({ response_schema: withRef, generative_ui: true }));
    if (sent.mode !== 'combined') throw new Error(`combined expected, got ${sent.mode}`);
    const validate = new Ajv({ strict: false }).compile(sent.schema);
    const gen_ui = { components: [{ type: 'text', props: {} }] };
    expect(validate({ data: { item: 'a' }, gen_ui })).toBe(true);
    expect(validate({ data: { item: 'c' }, gen_ui })).toBe(false);
    expect(validate({ data: { item: 'a' } })).toBe(false);
  });
});
