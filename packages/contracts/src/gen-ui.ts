/**
 * The generative UI component registry (spec 2.4, 2.8): the component types the frontend can
 * render, their props and the styles each accepts. The settings service builds the Generative UI
 * Catalog Schema from it (Generate Schema action); the pipeline checks LLM output against the
 * same registry, so "supported" means one thing everywhere.
 *
 * A component in LLM output is `{type, props, style?}`. Styles are named properties with
 * enumerated theme values, never free CSS, so an LLM cannot inject arbitrary styling.
 */

/** A JSON Schema (draft-07) fragment, as plain data. */
export type JsonSchema = { [key: string]: unknown };

export const GEN_UI_STYLES = {
  color: {
    description: 'Text colour (theme token)',
    values: ['default', 'muted', 'primary', 'success', 'warning', 'danger'],
  },
  background: {
    description: 'Background (theme token)',
    values: ['none', 'subtle', 'primary', 'success', 'warning', 'danger'],
  },
  font_weight: { description: 'Font weight', values: ['normal', 'bold'] },
  font_size: { description: 'Font size', values: ['small', 'medium', 'large'] },
  text_align: { description: 'Horizontal alignment', values: ['left', 'center', 'right'] },
  border: { description: 'Border', values: ['none', 'subtle', 'strong'] },
  spacing: { description: 'Space around the component', values: ['none', 'small', 'medium', 'large'] },
} as const satisfies Record<string, { description: string; values: readonly string[] }>;
export type GenUiStyleName = keyof typeof GEN_UI_STYLES;

export interface GenUiPropSpec {
  description: string;
  required: boolean;
  schema: JsonSchema;
}

export interface GenUiComponentSpec {
  description: string;
  props: Record<string, GenUiPropSpec>;
  styles: readonly GenUiStyleName[];
}

const text = (description: string, maxLength = 2000): GenUiPropSpec => ({
  description,
  required: true,
  schema: { type: 'string', minLength: 1, maxLength },
});
const optional = (prop: GenUiPropSpec): GenUiPropSpec => ({ ...prop, required: false });
const cell = {
  anyOf: [{ type: 'string', maxLength: 2000 }, { type: 'number' }, { type: 'boolean' }, { type: 'null' }],
};
const TEXT_STYLES = [
  'color',
  'font_weight',
  'font_size',
  'text_align',
  'spacing',
] as const satisfies readonly GenUiStyleName[];
const BOX_STYLES = ['background', 'border', 'spacing'] as const satisfies readonly GenUiStyleName[];

export const GEN_UI_COMPONENTS = {
  heading: {
    description: 'A section heading',
    props: {
      text: text('Heading text', 200),
      level: {
        description: 'Heading level, 1 is the largest',
        required: false,
        schema: { type: 'integer', minimum: 1, maximum: 4 },
      },
    },
    styles: ['color', 'text_align', 'spacing'],
  },
  text: {
    description: 'A paragraph of text',
    props: {
      text: text('The text', 10_000),
      format: {
        description: 'How the text is rendered',
        required: false,
        schema: { type: 'string', enum: ['plain', 'markdown'] },
      },
    },
    styles: TEXT_STYLES,
  },
  alert: {
    description: 'A highlighted message with a severity',
    props: {
      severity: {
        description: 'Severity',
        required: true,
        schema: { type: 'string', enum: ['info', 'success', 'warning', 'error'] },
      },
      message: text('The message'),
      title: optional(text('Short title', 200)),
    },
    styles: ['spacing'],
  },
  key_value: {
    description: 'Label and value pairs, such as configuration parameters',
    props: {
      items: {
        description: 'The pairs, in display order',
        required: true,
        schema: {
          type: 'array',
          minItems: 1,
          maxItems: 100,
          items: {
            type: 'object',
            required: ['label', 'value'],
            additionalProperties: false,
            properties: { label: { type: 'string', minLength: 1, maxLength: 200 }, value: cell },
          },
        },
      },
    },
    styles: BOX_STYLES,
  },
  table: {
    description: 'A table with a header row',
    props: {
      columns: {
        description: 'Column headings',
        required: true,
        schema: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', maxLength: 200 } },
      },
      rows: {
        description: 'Rows of cells, one cell per column',
        required: true,
        schema: { type: 'array', maxItems: 500, items: { type: 'array', maxItems: 20, items: cell } },
      },
      caption: optional(text('Caption', 500)),
    },
    styles: [...BOX_STYLES, 'font_size'],
  },
  list: {
    description: 'A bulleted or numbered list',
    props: {
      items: {
        description: 'List entries',
        required: true,
        schema: {
          type: 'array',
          minItems: 1,
          maxItems: 200,
          items: { type: 'string', minLength: 1, maxLength: 2000 },
        },
      },
      ordered: { description: 'Numbered when true', required: false, schema: { type: 'boolean' } },
    },
    styles: TEXT_STYLES,
  },
  code: {
    description: 'A block of code or configuration',
    props: {
      content: text('The code', 100_000),
      language: optional(text('Language for highlighting, such as yaml or json', 50)),
    },
    styles: BOX_STYLES,
  },
  badge: {
    description: 'A short status label',
    props: {
      text: text('Label text', 50),
      tone: {
        description: 'Meaning',
        required: false,
        schema: { type: 'string', enum: ['neutral', 'info', 'success', 'warning', 'danger'] },
      },
    },
    styles: ['spacing'],
  },
  metric: {
    description: 'A single figure with a label',
    props: {
      label: text('What the figure measures', 200),
      value: {
        description: 'The figure',
        required: true,
        schema: { anyOf: [{ type: 'string', maxLength: 100 }, { type: 'number' }] },
      },
      unit: optional(text('Unit', 20)),
      trend: {
        description: 'Direction of change',
        required: false,
        schema: { type: 'string', enum: ['up', 'down', 'flat'] },
      },
    },
    styles: [...BOX_STYLES, 'color'],
  },
  progress: {
    description: 'A progress bar',
    props: {
      value: {
        description: 'Percent complete',
        required: true,
        schema: { type: 'number', minimum: 0, maximum: 100 },
      },
      label: optional(text('Label', 200)),
    },
    styles: ['color', 'spacing'],
  },
  link: {
    description: 'A link to a web page',
    props: {
      text: text('Link text', 200),
      url: {
        description: 'http(s) address',
        required: true,
        schema: { type: 'string', pattern: '^https?://[^\\s]+$', maxLength: 2048 },
      },
    },
    styles: ['font_weight', 'spacing'],
  },
  divider: { description: 'A horizontal rule between sections', props: {}, styles: ['spacing'] },
} as const satisfies Record<string, GenUiComponentSpec>;

export type GenUiComponentType = keyof typeof GEN_UI_COMPONENTS;
export const GEN_UI_COMPONENT_TYPES = Object.keys(GEN_UI_COMPONENTS) as GenUiComponentType[];

export function isGenUiComponentType(value: unknown): value is GenUiComponentType {
  return typeof value === 'string' && Object.hasOwn(GEN_UI_COMPONENTS, value);
}

export const GEN_UI_MAX_COMPONENTS = 50;
export const JSON_SCHEMA_DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

function componentSchema(type: string, spec: GenUiComponentSpec): JsonSchema {
  const props = Object.entries(spec.props);
  const required = props.filter(([, prop]) => prop.required).map(([name]) => name);
  return {
    title: type,
    description: spec.description,
    type: 'object',
    required: required.length > 0 ? ['type', 'props'] : ['type'],
    additionalProperties: false,
    properties: {
      type: { const: type },
      props: {
        type: 'object',
        additionalProperties: false,
        ...(required.length > 0 ? { required } : {}),
        properties: Object.fromEntries(
          props.map(([name, prop]) => [name, { description: prop.description, ...prop.schema }]),
        ),
      },
      style: {
        type: 'object',
        additionalProperties: false,
        properties: Object.fromEntries(
          spec.styles.map((name) => [
            name,
            { description: GEN_UI_STYLES[name].description, enum: [...GEN_UI_STYLES[name].values] },
          ]),
        ),
      },
    },
  };
}

/**
 * The Generative UI Catalog Schema: a draft-07 JSON Schema of `{components: [...]}`, one
 * `anyOf` branch per component type (every branch inline, no `$ref`, so an administrator can
 * drop a component type or a style value by deleting it, and providers without `$ref` support
 * can take it as is).
 */
export function buildGenUiCatalogSchema(
  registry: Record<string, GenUiComponentSpec> = GEN_UI_COMPONENTS,
): JsonSchema {
  return {
    $schema: JSON_SCHEMA_DRAFT_07,
    title: 'Generative UI catalog',
    description:
      'Answer with {"components": [...]}: the UI components to show, in display order. Use only these component types, props and style values.',
    type: 'object',
    required: ['components'],
    additionalProperties: false,
    properties: {
      components: {
        type: 'array',
        minItems: 1,
        maxItems: GEN_UI_MAX_COMPONENTS,
        items: { anyOf: Object.entries(registry).map(([type, spec]) => componentSchema(type, spec)) },
      },
    },
  };
}
